package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/xspace"
)

// TestCombineLayoutTensorBoard: combine --layout tensorboard writes the
// combined XSpace where tensorboard --logdir finds it, named after the run
// directory unless --tb-run says otherwise, and the other outputs beside
// --output; an unknown layout is refused.
func TestCombineLayoutTensorBoard(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		space string // relative to the run directory
		code  int
	}{
		{"run-dir name", []string{"--layout", "tensorboard"}, "plugins/profile/train4/combined.xplane.pb", 0},
		{"named", []string{"--layout", "tensorboard", "--tb-run", "r1", "--tb-host", "h"}, "plugins/profile/r1/h.xplane.pb", 0},
		{"default", []string{"--layout", "default"}, "combined.xplane.pb", 0},
		{"unknown", []string{"--layout", "flat"}, "", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train4")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeNodeTraces(t, dir, 2, 2, false)
			args := append([]string{"combine", "--run-dir", dir, "--auto-discover", "--no-correction"}, tc.args...)
			code, out, errOut := runCLI(args...)
			if tc.code != 0 {
				if code == 0 || !strings.Contains(errOut, "--layout") {
					t.Fatalf("exit %d, stderr %q; want a refusal naming --layout", code, errOut)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			space := filepath.Join(dir, tc.space)
			if !strings.Contains(out, "wrote "+space+"\n") {
				t.Errorf("output does not name %s:\n%s", space, out)
			}
			s, err := xspace.Read(space)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Planes) != 8 { // 3 planes per node, 2 clock metadata
				t.Errorf("%d planes", len(s.Planes))
			}
			if _, err := os.Stat(filepath.Join(dir, "combined.metadata.json")); err != nil {
				t.Error(err)
			}
			if tc.space != "combined.xplane.pb" {
				if _, err := os.Stat(filepath.Join(dir, "combined.xplane.pb")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("combined.xplane.pb written too: %v", err)
				}
			}
		})
	}
}
