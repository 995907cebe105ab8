//go:build linux

package harness

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealPanicRecorded: on the real backend too (one node of a loopback
// cluster: no namespaces, no root), a panic in a node's callback, in
// recording the outputs or in the summary writes failure.txt with its
// phase and the command that reproduces it, and leaves no staging
// directory.
func TestRealPanicRecorded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lone.yaml")
	if err := os.WriteFile(file, []byte("name: lone\nduration: 400ms\nnodes: 2\nprotocol: {kind: ping, interval: 20ms}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := parse(t, string(read(t, file)))
	a := byte(time.Now().UnixNano()%200 + 20)
	addrs := []netip.Addr{netip.AddrFrom4([4]byte{127, 78, a, 1}), netip.AddrFrom4([4]byte{127, 78, a, 2})}
	cases := []struct{ panicIn, phase, value string }{
		{"program", phaseRealRun, "node 0: panic in a callback: program bug"},
		{"finish", phaseRecord, "finish bug in "},
		{"summarize", phaseSummary, "summarize bug"},
	}
	for _, tc := range cases {
		t.Run(tc.panicIn, func(t *testing.T) {
			p := newFaulty(tc.panicIn)
			p.panicNode, p.panicAt = 0, 100*time.Millisecond
			out := filepath.Join(t.TempDir(), "run")
			_, err := Run(sc, Options{Out: out, ScenarioFile: file, Backend: "real", Context: context.Background(),
				Cluster: &ClusterNode{Addresses: addrs, Rank: 0}, protocol: p})
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("err = %v, want a *Failure", err)
			}
			if f.Phase != tc.phase || !strings.HasPrefix(f.Panic, tc.value) {
				t.Errorf("failure %s with %q, want %s with %q", f.Phase, f.Panic, tc.phase, tc.value)
			}
			text := string(read(t, filepath.Join(out, FileFailure)))
			for _, want := range []string{
				"failed " + tc.phase + " ",
				"panic: " + tc.value,
				fmt.Sprintf("reproduce with: chronosync run %s --seed %d --backend real\n", file, sc.Seed),
			} {
				if !strings.Contains(text, want) {
					t.Errorf("failure.txt lacks %q:\n%s", want, text)
				}
			}
			if _, err := os.Stat(filepath.Join(out, FileLog)); err != nil {
				t.Errorf("the run log was not kept: %v", err)
			}
			if left := stagingLeft(t, out); len(left) > 0 {
				t.Errorf("staging directories left behind: %q", left)
			}
		})
	}
}
