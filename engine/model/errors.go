package model

import (
	"errors"
	"fmt"
	"time"
)

// ErrMalformedResponse marks a reply with a success status whose body is
// not valid JSON or has no choices (Chat Completions) or output (Responses).
var ErrMalformedResponse = errors.New("malformed model response")

// ErrTransport marks a failure with no HTTP status: a connection error or a
// request timeout.
var ErrTransport = errors.New("model transport failure")

// maxErrorBody bounds how much of an error body an *APIError keeps.
const maxErrorBody = 2048

// APIError is a reply with an HTTP status other than 200.
type APIError struct {
	Status int
	// Body is the start of the response body, with the API key removed.
	Body string
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("model endpoint replied HTTP %d", e.Status)
	}
	return fmt.Sprintf("model endpoint replied HTTP %d: %s", e.Status, e.Body)
}

// Retryable reports whether the status is one kasmrt retries.
func (e *APIError) Retryable() bool {
	switch e.Status {
	case 408, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// TransportError is a failed attempt that got no HTTP status.
type TransportError struct {
	// Timeout is true when the per-request timeout expired.
	Timeout bool
	Err     error
}

func (e *TransportError) Error() string {
	if e.Timeout {
		return fmt.Sprintf("model request timed out: %v", e.Err)
	}
	return fmt.Sprintf("model request failed: %v", e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTransport) true for every TransportError.
func (e *TransportError) Is(target error) bool { return target == ErrTransport }

// Attempt describes one HTTP attempt of a turn, for progress events.
type Attempt struct {
	// N counts attempts from 1.
	N int
	// Status is the HTTP status, 0 when none was received.
	Status int
	// Err is the attempt's failure, nil on success.
	Err error
	// Delay is how long the client waits before the next attempt; zero
	// when there is none.
	Delay time.Duration
	// Duration is how long the attempt took.
	Duration time.Duration
}
