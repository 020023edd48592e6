package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestProcessStopsServingFirst: when the process's context ends, the background tier keeps
// running until every component of the serving tier returned, then stops too.
func TestProcessStopsServingFirst(t *testing.T) {
	stopping, release := make(chan struct{}), make(chan struct{})
	bgCtx := make(chan context.Context, 1)
	bgDone := make(chan struct{})
	p := process{log: slog.New(slog.DiscardHandler),
		serving: []Component{{Name: "http", Run: func(ctx context.Context) error {
			<-ctx.Done()
			close(stopping)
			<-release // requests under way finishing
			return nil
		}}},
		background: []Component{{Name: "relay", Run: func(ctx context.Context) error {
			bgCtx <- ctx
			<-ctx.Done()
			close(bgDone)
			return nil
		}}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- p.run(ctx, func() { close(started) }) }()
	<-started
	bg := <-bgCtx
	cancel()
	<-stopping
	if bg.Err() != nil {
		t.Fatal("the background tier stopped while the serving tier was still stopping")
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v, want nil after the context ended", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after every component stopped")
	}
	select {
	case <-bgDone:
	default:
		t.Fatal("run returned before the background tier stopped")
	}
}

// TestProcessComponentFailureStopsAll: a component that fails stops every other one, and
// run returns its error named after it.
func TestProcessComponentFailureStopsAll(t *testing.T) {
	boom := errors.New("boom")
	p := process{log: slog.New(slog.DiscardHandler),
		serving: []Component{{Name: "http", Run: func(ctx context.Context) error { <-ctx.Done(); return nil }}},
		background: []Component{
			loop("audit-retention", func(ctx context.Context) { <-ctx.Done() }),
			{Name: "tasks", Run: func(context.Context) error { return boom }},
		},
	}
	done := make(chan error, 1)
	go func() { done <- p.run(context.Background(), nil) }()
	select {
	case err := <-done:
		if !errors.Is(err, boom) || err.Error() != "tasks: boom" {
			t.Fatalf("run: %v, want tasks: boom", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a failed component did not stop the process")
	}
}
