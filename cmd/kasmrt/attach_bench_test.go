package main

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/serve"
	"github.com/kasmrt/kasmrt/tui/remote"
)

// publishedBenchRun is a published run whose events the benchmark writes itself,
// through the report writer a run uses.
type publishedBenchRun struct{ dir string }

func (r publishedBenchRun) ReportDir() string        { return r.dir }
func (r publishedBenchRun) Inbox() *inbox.Inbox      { return nil }
func (r publishedBenchRun) Steer(events.Steer) error { return nil }

// BenchmarkEventToAttachedConsole measures the latency from an event
// entering a run's stream (events.jsonl, then the bus sink that wakes the
// streams, as the engine does) to the attached console's sink, over
// loopback HTTP with a bearer token: the file, the Server-Sent Event, the
// remote client's decoding. The console's own repaint is measured by
// tui's BenchmarkKeyToRepaint.
func BenchmarkEventToAttachedConsole(b *testing.B) {
	dir := b.TempDir()
	w, err := report.Create(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	m := serve.NewManager(b.Context(), serve.Options{})
	m.Publish(serve.RunInfo{Name: "bench"}, publishedBenchRun{dir})
	srv := httptest.NewServer(serve.NewHandler(m, serve.HTTPOptions{Token: listenToken}))
	defer srv.Close()
	c, err := remote.Dial(b.Context(), srv.URL, listenToken, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	arrived := make(chan int64, 1)
	ctx, cancel := context.WithCancel(b.Context())
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		_ = c.Follow(ctx, func(e events.Event) {
			select {
			case arrived <- e.Seq:
			case <-ctx.Done():
			}
		}, nil)
	}()
	// The stream ends before the server closes, or Close would wait on it.
	defer func() { cancel(); <-followed }()
	publish := func(seq int64) {
		e := events.Event{Seq: seq, T: time.Now(), Kind: events.KindLog, Message: "a step ended"}
		w.Event(e)
		m.Event(e)
	}
	publish(1)
	<-arrived
	var lat []time.Duration
	seq := int64(1)
	for b.Loop() {
		seq++
		start := time.Now()
		publish(seq)
		for got := <-arrived; got != seq; got = <-arrived {
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms/median")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms/p95")
}
