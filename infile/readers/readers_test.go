package readers_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/phasegap/sweep"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xspace"
	"github.com/chronosync/chronosync/workload/halo"
)

// reader is one reader of an input, by the path it is given.
type reader struct {
	name string // what the input is, as infile names it
	read func(path string) error
}

// readers are the readers of every kind of input.
var readers = []reader{
	{"an XSpace trace", func(p string) error { _, err := xspace.Read(p); return err }},
	{"a snapshots file", func(p string) error { _, err := xspace.ReadSnapshots(p); return err }},
	{"a Kineto trace", func(p string) error { _, err := kineto.Read(p); return err }},
	{"an offsets or rounds file", func(p string) error { _, _, err := offsets.ReadOffsets(p); return err }},
	{"an offsets or rounds file", func(p string) error { _, _, _, err := offsets.ReadRounds(p); return err }},
	{"a legacy offsets file", func(p string) error { _, err := offsets.ReadLegacy(p); return err }},
	{"a ground truth file", func(p string) error { _, _, err := groundtruth.Read(p); return err }},
	{"a probe log", func(p string) error { _, _, err := probelog.ReadFile(p); return err }},
	{"a cluster file", func(p string) error { _, err := harness.LoadCluster(p); return err }},
	{"a run manifest", func(p string) error {
		dir, err := os.MkdirTemp("", "manifest")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := os.Symlink(p, filepath.Join(dir, harness.FileManifest)); err != nil {
			return err
		}
		_, err = harness.ReadManifest(dir)
		return err
	}},
	{"a scenario file", func(p string) error { _, err := scenario.Load(p); return err }},
	{"a sweep matrix", func(p string) error { _, err := sweep.Load(p); return err }},
	{"a costs file", func(p string) error { _, err := halo.LoadCosts(p); return err }},
	{"a results CSV", func(p string) error { _, err := report.ReadCSVFile(p); return err }},
	{"a key file", func(p string) error { _, err := auth.LoadKey(p); return err }},
}

// refused runs read on path and checks that it returns at once with an
// error that says want.
func refused(t *testing.T, r reader, path, want string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.read(path) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v\nwant …%s…", r.name, err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still reading %s after 5 s", r.name, path)
	}
}

// TestInputIsDevice: /dev/zero given as any input is refused as a device
// (it was read without end: 3 GB for an XSpace trace, a snapshots file, a
// cluster file, a scenario). A key file others may read is refused before
// that, for its mode.
func TestInputIsDevice(t *testing.T) {
	for _, r := range readers {
		want := ": is a character device, not a regular file (expected " + r.name + ")"
		if r.name == "a key file" {
			want = "is readable by others"
		}
		refused(t, r, "/dev/zero", want)
	}
}

// TestInputIsFIFO: a FIFO given as any input is refused at once, naming
// it (reading one blocked for ever with no message).
func TestInputIsFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range readers {
		refused(t, r, path, ": is a FIFO, not a regular file (expected "+r.name+")")
	}
}
