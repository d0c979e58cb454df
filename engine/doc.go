// Package engine runs one kasmrt test: it turns a scenario, an operator file
// and the environment into an immutable run configuration, drives the
// application through the drivers, keeps every guard and budget, and decides
// the verdict from deterministic checks.
package engine
