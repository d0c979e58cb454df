// Package proc starts and stops child processes in their own process groups:
// the application under test and the disposable commands behind a scenario's
// declared tools.
package proc
