package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Component is one long-running part of a process: an HTTP server, a controller's loop, the
// task handlers. Run returns when ctx ends (nil) or when the component cannot go on (its
// error, which stops the whole process).
type Component struct {
	// Name names the component in logs and in the error that stopped the process.
	Name string
	// Run runs the component until ctx ends.
	Run func(ctx context.Context) error
}

// loop is the component of a loop that runs until its context ends and never fails.
func loop(name string, run func(ctx context.Context)) Component {
	return Component{Name: name, Run: func(ctx context.Context) error { run(ctx); return nil }}
}

// serveHTTP is the component of srv serving on ln: when its context ends it stops accepting,
// lets the requests under way finish within grace, and returns.
func serveHTTP(name string, srv *http.Server, ln net.Listener, grace time.Duration) Component {
	return Component{Name: name, Run: func(ctx context.Context) error {
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served:
			return err // Serve only returns early on failure
		case <-ctx.Done():
		}
		sctx, done := context.WithTimeout(context.WithoutCancel(ctx), grace)
		defer done()
		err := srv.Shutdown(sctx)
		if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			return serr
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}}
}

// process is the components of one process in two tiers. The serving tier (the HTTP
// servers) takes the requests; the background tier (the outbox relay, the worker's
// controllers) carries out what the requests recorded. Both start together under one
// errgroup; when the process's context ends or any component fails, the serving tier stops
// first — its requests under way finish, and their outbox rows are still relayed — and the
// background tier after it.
type process struct {
	log        *slog.Logger
	serving    []Component
	background []Component
}

// run starts every component, calls started (if not nil) once they are all started, and
// waits until they all returned. Its error is the first a component returned, named after
// the component; nil when ctx ended and every component stopped cleanly.
func (p process) run(ctx context.Context, started func()) error {
	g, gctx := errgroup.WithContext(ctx)
	// The background tier has a context of its own, ended once the serving tier stopped.
	bg, stopBackground := context.WithCancel(context.WithoutCancel(gctx))
	defer stopBackground()
	var serving sync.WaitGroup
	start := func(ctx context.Context, c Component) {
		g.Go(func() error {
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				p.log.Error("component failed", "component", c.Name, "err", err)
				return fmt.Errorf("%s: %w", c.Name, err)
			} else if err != nil {
				p.log.Warn("component stopped with an error", "component", c.Name, "err", err)
			}
			return nil
		})
	}
	for _, c := range p.serving {
		serving.Add(1)
		start(gctx, Component{Name: c.Name, Run: func(ctx context.Context) error { defer serving.Done(); return c.Run(ctx) }})
	}
	for _, c := range p.background {
		start(bg, c)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-gctx.Done() // also when every component returned: g.Wait ends gctx
		p.log.Info("shutting down", "components", len(p.serving)+len(p.background))
		serving.Wait()
		stopBackground()
	}()
	if started != nil {
		started()
	}
	err := g.Wait()
	<-stopped
	return err
}
