package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Path is where [Serve] serves the exposition.
const Path = "/metrics"

// ShutdownTimeout bounds how long [Serve] waits, once its context ends,
// for scrapes in progress to finish before it closes their connections.
const ShutdownTimeout = 5 * time.Second

// Serve listens on addr (host:port; port 0 picks a free one) and serves m
// at /metrics until ctx ends, then shuts the server down and returns nil.
// It returns an error when it cannot listen or the server fails. It blocks:
// a real node runs it in a goroutine of its own (the simulator never
// does).
func Serve(ctx context.Context, addr string, m *Metrics) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	return ServeListener(ctx, ln, m)
}

// Listen opens the TCP listener [Serve] serves on, so that a caller can
// learn the port that addr's port 0 picked (ln.Addr) before it serves.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %q (want host:port, e.g. 127.0.0.1:9471): %w", addr, err)
	}
	return ln, nil
}

// ServeListener is [Serve] on a listener of the caller's; it closes ln.
func ServeListener(ctx context.Context, ln net.Listener, m *Metrics) error {
	mux := http.NewServeMux()
	mux.Handle(Path, m.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "chronosync node %d: metrics at %s\n", m.node, Path)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("metrics: serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("metrics: shut down the server on %s (within %v): %w", ln.Addr(), ShutdownTimeout, err)
	}
	return nil
}
