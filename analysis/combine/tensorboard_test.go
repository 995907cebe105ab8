package combine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/xspace"
)

// TestTensorBoardLayout: LayoutTensorBoard puts the combined XSpace, and
// nothing else, at <logdir>/plugins/profile/<run>/<host>.xplane.pb, the
// other outputs beside Output; a failed combine leaves no directory it
// made; bad names and layouts are refused.
func TestTensorBoardLayout(t *testing.T) {
	cases := []struct {
		name      string
		o         Options // Output and the inputs set below
		wantSpace string  // relative to the test's directory
		err       string
	}{
		{"default", Options{}, "out/c.xplane.pb", ""},
		{"tensorboard", Options{Layout: LayoutTensorBoard}, "out/plugins/profile/chronosync/combined.xplane.pb", ""},
		{"named", Options{Layout: LayoutTensorBoard, TensorBoardRun: "train4", TensorBoardHost: "host-a.example"},
			"out/plugins/profile/train4/host-a.example.xplane.pb", ""},
		{"logdir", Options{Layout: LayoutTensorBoard, TensorBoardDir: "tb"}, "tb/plugins/profile/chronosync/combined.xplane.pb", ""},
		{"bad-run", Options{Layout: LayoutTensorBoard, TensorBoardRun: "../x"}, "", "TensorBoard run name"},
		{"dot-host", Options{Layout: LayoutTensorBoard, TensorBoardHost: ".h"}, "", "TensorBoard host name"},
		{"bad-layout", Options{Layout: "flat"}, "", "unknown layout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var inputs []Input
			for i := range 2 {
				path := filepath.Join(dir, "in", "node"+string(rune('0'+i))+".xplane.pb")
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				writeSpecNode(t, path, gpuNode)
				inputs = append(inputs, Input{Node: i, Trace: path})
			}
			o := tc.o
			o.Output, o.NoCorrection = filepath.Join(dir, "out", "c.xplane.pb"), true
			if o.TensorBoardDir != "" {
				o.TensorBoardDir = filepath.Join(dir, o.TensorBoardDir)
			}
			res, err := Combine(inputs, o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("refused combine left out/: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			space := filepath.Join(dir, tc.wantSpace)
			if got := SpacePath(o); got != space {
				t.Errorf("SpacePath = %s, want %s", got, space)
			}
			if !slices.Contains(res.Files, space) {
				t.Errorf("files %q lack %s", res.Files, space)
			}
			s, err := xspace.Read(space)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Planes) != 2*len(gpuNode)+2 {
				t.Errorf("%d planes", len(s.Planes))
			}
			for _, ext := range []string{".trace.json.gz", ".metadata.json"} {
				if _, err := os.Stat(filepath.Join(dir, "out", "c"+ext)); err != nil {
					t.Errorf("other output: %v", err)
				}
			}
			if o.Layout == LayoutTensorBoard {
				if _, err := os.Stat(o.Output); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("--output %s written too: %v", o.Output, err)
				}
				// The run's directory holds the XSpace alone: xprof takes
				// every file there for a host or a tool.
				ents, err := os.ReadDir(filepath.Dir(space))
				if err != nil {
					t.Fatal(err)
				}
				if len(ents) != 1 || ents[0].Name() != filepath.Base(space) {
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Errorf("run directory holds %q", names)
				}
			}
		})
	}
}

// TestTensorBoardLayoutFailure: a combine that fails after the layout's
// directories were made removes them again, and replaces nothing.
func TestTensorBoardLayoutFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node0.xplane.pb")
	writeSpecNode(t, path, gpuNode)
	o := Options{Output: filepath.Join(dir, "out", "c.xplane.pb"), NoCorrection: true, Layout: LayoutTensorBoard,
		outputHook: func(step, p string) error {
			if step == "rename" {
				return errors.New("injected")
			}
			return nil
		}}
	if _, err := Combine([]Input{{Node: 0, Trace: path}}, o); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "plugins")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plugins/ left behind: %v", err)
	}
}
