// Package tui is kasmrt's Bubble Tea operator console: the live view of a
// run, its inbox and steering, and the replay of saved reports.
package tui
