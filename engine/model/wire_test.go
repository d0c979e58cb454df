package model

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestParseRetryAfter: Retry-After in seconds or as an HTTP date; a wait
// of no time, a negative one, a date already past and an unreadable value
// are no wait.
func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{" 3 ", 3 * time.Second},
		{"2.5", 2500 * time.Millisecond},
		{"0", 0},
		{"-5", 0},
		{"Wed, 02 Dec 2026 05:00:07 GMT", 7 * time.Second},
		{"Wed, 02 Dec 2026 05:00:00 GMT", 0},
		{"Wed, 02 Dec 2026 04:59:00 GMT", 0},
		{"soon", 0},
	} {
		if got := parseRetryAfter(c.v, now); got != c.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestSleepContext: a backoff wait ends with the context, and says so,
// rather than passing as if the wait were done.
func TestSleepContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := sleepContext(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an hour's wait under a 10 ms deadline: %v, want the deadline", err)
	}
	if err := sleepContext(context.Background(), time.Millisecond); err != nil {
		t.Errorf("a short wait: %v", err)
	}
}
