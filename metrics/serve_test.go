package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServe serves on 127.0.0.1:0, scrapes /metrics and /, then ends the
// context: Serve returns nil and the port no longer answers.
func TestServe(t *testing.T) {
	m := newTest(3, true)
	m.ObserveRound(solvedRound(1))
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeListener(ctx, ln, m) }()

	client := &http.Client{Timeout: 5 * time.Second}
	for _, tt := range []struct {
		path, want string
		status     int
	}{
		{"/metrics", `chronosync_rounds_total{result="solved"} 1`, http.StatusOK},
		{"/", "chronosync node 3: metrics at /metrics", http.StatusOK},
		{"/nothing", "404 page not found", http.StatusNotFound},
	} {
		resp, err := client.Get("http://" + addr + tt.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s: %s, %d bytes; want %d with %q", tt.path, resp.Status, len(body), tt.status, tt.want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after its context ended: %v, want nil", err)
		}
	case <-time.After(ShutdownTimeout + 2*time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Serve returned", addr)
	}
}

// TestServeErrors: an address that cannot be listened on is an error that
// names it; a context ended before Serve is a clean return.
func TestServeErrors(t *testing.T) {
	m := newTest(0, false)
	tests := []struct {
		name, addr string
		cancelled  bool
		want       string // "" wants nil
	}{
		{"no port", "127.0.0.1", false, `metrics: listen on "127.0.0.1"`},
		{"bad port", "127.0.0.1:99999", false, `metrics: listen on "127.0.0.1:99999"`},
		{"context ended before", "127.0.0.1:0", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancelled {
				cancel()
			}
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Serve(ctx, tt.addr, m) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return")
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Serve: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Serve: %v, want an error with %q", err, tt.want)
			}
		})
	}
	// A port in use.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Serve(context.Background(), ln.Addr().String(), m)
	var op *net.OpError
	if !errors.As(err, &op) || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Serve on a port in use: %v, want a *net.OpError naming %s", err, ln.Addr())
	}
}
