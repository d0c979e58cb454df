package model_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// The gate is passed before every attempt, retries included, and released
// after each; its wait is not part of the attempt's timeout.
func TestGateBeforeEachAttempt(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Status(503), modeltest.Text("ok"))
	var entered, released atomic.Int32
	c, _ := newClient(t, srv, "qwen3-vl-8b-instruct", func(cfg *model.Config) {
		cfg.Timeout = 200 * time.Millisecond
		cfg.Gate = func(ctx context.Context) (func(), error) {
			if entered.Load() != released.Load() {
				t.Error("an attempt passed the gate while the previous one still held it")
			}
			entered.Add(1)
			time.Sleep(300 * time.Millisecond) // longer than the attempt's timeout
			return func() { released.Add(1) }, nil
		}
	})
	resp, err := c.Turn(context.Background(), history())
	if err != nil {
		t.Fatalf("turn: %v (the gate's wait must not count against model.timeout)", err)
	}
	if resp.Text != "ok" || resp.Attempts != 2 {
		t.Errorf("reply %q after %d attempts, want ok after 2", resp.Text, resp.Attempts)
	}
	if entered.Load() != 2 || released.Load() != 2 {
		t.Errorf("gate entered %d and released %d times, want 2 and 2", entered.Load(), released.Load())
	}
}

// A wait that ends (the run's deadline) ends the turn without a request.
func TestGateCancelled(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t)
	c, _ := newClient(t, srv, "qwen3-vl-8b-instruct", func(cfg *model.Config) {
		cfg.Gate = func(ctx context.Context) (func(), error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Turn(ctx, history())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "model turn") {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}
