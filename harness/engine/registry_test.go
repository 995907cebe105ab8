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

// TestRegistry: a scenario finds the adapter of both its kinds, else its
// workload's, else its protocol's, whatever the order of registration;
// a scenario of no registered kind finds none.
func TestRegistry(t *testing.T) {
	keys := map[string]Key{
		"phasegap":      {Workload: "phasegap"},
		"ping":          {Protocol: "ping"},
		"sync":          {Protocol: "sync"},
		"training+sync": {Workload: "training", Protocol: "sync"},
	}
	for _, order := range [][]string{
		{"phasegap", "ping", "sync", "training+sync"},
		{"training+sync", "sync", "ping", "phasegap"},
	} {
		r := NewRegistry()
		for _, name := range order {
			r.Register(keys[name], newFails(name))
		}
		for _, tc := range []struct {
			workload, protocol string
			want               string // "" for none
		}{
			{"phasegap", "none", "phasegap"},
			{"phasegap", "sync", "phasegap"},
			{"", "ping", "ping"},
			{"training", "ping", "ping"},
			{"", "sync", "sync"},
			{"snapshots", "sync", "sync"},
			{"training", "sync", "training+sync"},
			{"", "none", ""},
			{"training", "", ""},
			{"", "", ""},
		} {
			n, ok := r.Lookup(tc.workload, tc.protocol)
			if ok != (tc.want != "") {
				t.Fatalf("order %v: Lookup(%q, %q) ok %v, want %q", order, tc.workload, tc.protocol, ok, tc.want)
			}
			if !ok {
				continue
			}
			var got errNew
			if _, err := n(nil, nil); !errors.As(err, &got) || string(got) != tc.want {
				t.Errorf("order %v: Lookup(%q, %q) gave the constructor of %v, want %s", order, tc.workload, tc.protocol, err, tc.want)
			}
		}
	}
}

// TestRegisterPanics: a key registered twice, an empty key and a nil
// constructor are programming errors.
func TestRegisterPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  func(r *Registry)
	}{
		{"twice", func(r *Registry) {
			r.Register(Key{Protocol: "a"}, newFails("a"))
			r.Register(Key{Protocol: "a"}, newFails("a"))
		}},
		{"empty key", func(r *Registry) { r.Register(Key{}, newFails("a")) }},
		{"nil constructor", func(r *Registry) { r.Register(Key{Workload: "a"}, nil) }},
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
