// Package inbox holds the questions a run asks a human and the answers that
// come back, whether from the console, HTTP or a messaging service.
//
// The engine's ask_human tool calls Ask, which blocks until an answer comes
// or its context ends; respond calls Post. The console answers through the
// engine, which calls Answer; remote operators use Handler's HTTP routes; a
// messaging bridge learns of questions through Options.Notify and answers
// through Answer or HTTP. Observe turns every change into engine events.
package inbox
