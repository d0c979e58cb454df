// Package inbox holds the questions a run asks a human and the answers that
// come back, whether from the console, HTTP or a messaging service.
package inbox
