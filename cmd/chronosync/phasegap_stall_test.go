package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/phasegap/params"
)

// TestParseStall: --stall-timeout takes auto, 0 (off), a duration or
// seconds, and refuses anything else with the flag's name.
func TestParseStall(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"auto", params.StallAuto, ""},
		{"0", 0, ""},
		{"30s", 30 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"2.5", 2500 * time.Millisecond, ""},
		{"-1s", 0, "positive duration"},
		{"-3", 0, "positive duration"},
		{"soon", 0, `--stall-timeout "soon": expected auto`},
		{"NaN", 0, "expected auto"},
	} {
		got, err := parseStall(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
