package real_test

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/world"
)

// timerBug panics in a timer callback, on the node's event loop.
func timerBug(env world.Env) error {
	env.AfterFunc(time.Millisecond, func() { panic("timer bug") })
	return nil
}

// startBug panics in the program's Start.
func startBug(world.Env) error { panic("start bug") }

// TestCallbackPanicStack: a callback's panic, in a timer on the node's
// event loop or in the program's Start, is a *CallbackPanic from Failure
// and Stop that names the node and the value and keeps the stack down to
// the panic; PanicStack finds it in a wrapped error.
func TestCallbackPanicStack(t *testing.T) {
	for _, tc := range []struct {
		name, value, frame string
		program            func(world.Env) error
	}{
		{"timer", "timer bug", "real_test.timerBug.func1", timerBug},
		{"start", "start bug", "real_test.startBug", startBug},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := byte(1+rand.IntN(250)), byte(rand.IntN(256))
			cfg := real.Config{Seed: 1, LogLevel: 8, Nodes: []real.NodeConfig{
				{Addr: netip.AddrFrom4([4]byte{127, a, b, 1})},
				{Addr: netip.AddrFrom4([4]byte{127, a, b, 2})},
			}}
			w, err := real.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_ = w.Start(func(id world.NodeID) world.Program {
				if id == 1 {
					return world.ProgramFunc(tc.program)
				}
				return world.ProgramFunc(func(world.Env) error { return nil })
			})
			deadline := time.Now().Add(5 * time.Second)
			for w.Failure() == nil && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			failure := w.Failure()
			stopped := w.Stop()
			if stopped != failure {
				t.Errorf("Stop returned %v, Failure %v: want the same panic", stopped, failure)
			}
			var p *real.CallbackPanic
			if !errors.As(failure, &p) {
				t.Fatalf("Failure() = %v, want a *CallbackPanic", failure)
			}
			if p.Node != 1 || p.Value != tc.value {
				t.Errorf("panic of node %d with %v, want node 1 with %q", p.Node, p.Value, tc.value)
			}
			if want := "node 1: panic in a callback: " + tc.value; p.Error() != want {
				t.Errorf("Error() = %q, want %q", p.Error(), want)
			}
			// The stack is the panicking goroutine's, taken during the
			// panic: it holds the callback's own frame.
			for _, want := range []string{"goroutine ", "panic(", tc.frame, "world_test.go:"} {
				if !strings.Contains(p.Stack, want) {
					t.Errorf("stack lacks %q:\n%s", want, p.Stack)
				}
			}
			if got := real.PanicStack(errors.Join(errors.New("run"), failure)); got != p.Stack {
				t.Errorf("PanicStack of the wrapped panic = %q, want its stack", got)
			}
		})
	}
	if got := real.PanicStack(errors.New("not a panic")); got != "" {
		t.Errorf("PanicStack of a plain error = %q", got)
	}
	if got := real.PanicStack(nil); got != "" {
		t.Errorf("PanicStack(nil) = %q", got)
	}
}
