package engine

import (
	"errors"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// errNew marks which constructor Lookup returned.
type errNew string

func (e errNew) Error() string { return string(e) }

func newFails(msg string) New {
	return func(*scenario.Scenario, *scenario.Resolved) (Protocol, error) { return nil, errNew(msg) }
}

// TestRegistry: a kind finds its own constructor whatever the order of
// registration, an unknown kind none.
func TestRegistry(t *testing.T) {
	for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
		r := NewRegistry()
		for _, k := range order {
			r.Register(k, newFails(k))
		}
		for _, tc := range []struct {
			kind string
			ok   bool
		}{{"a", true}, {"b", true}, {"c", false}, {"", false}} {
			n, ok := r.Lookup(tc.kind)
			if ok != tc.ok {
				t.Fatalf("order %v: Lookup(%q) ok %v, want %v", order, tc.kind, ok, tc.ok)
			}
			if !ok {
				continue
			}
			var got errNew
			if _, err := n(nil, nil); !errors.As(err, &got) || string(got) != tc.kind {
				t.Errorf("order %v: Lookup(%q) gave the constructor of %v", order, tc.kind, err)
			}
		}
	}
}

// TestRegisterPanics: a kind registered twice, an empty kind and a nil
// constructor are programming errors.
func TestRegisterPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  func(r *Registry)
	}{
		{"twice", func(r *Registry) { r.Register("a", newFails("a")); r.Register("a", newFails("a")) }},
		{"empty kind", func(r *Registry) { r.Register("", newFails("a")) }},
		{"nil constructor", func(r *Registry) { r.Register("a", nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.reg(NewRegistry())
		})
	}
}
