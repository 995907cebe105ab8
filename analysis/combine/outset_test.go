package combine

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/lockfile"
)

// smallKineto is a two-event Kineto trace of rank; rank 0's copy is the
// input of the Kineto cases.
func smallKineto(rank string) string {
	return `{"distributedInfo":{"rank":` + rank + `,"world_size":2},"traceEvents":[` +
		`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1000,"dur":5},` +
		`{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":7,"ts":1010,"dur":5}]}`
}

// tree is every file under dir (hidden ones, staging directories and
// symbolic links included) with its contents: directories end in "/",
// links show their target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			files[rel] = "-> " + target
			return err
		case d.IsDir():
			files[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(path)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameTree reports the differences between two trees.
func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if b, ok := before[name]; !ok {
			t.Errorf("new: %s", name)
		} else if b != after[name] {
			t.Errorf("changed: %s", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[name]; !ok {
			t.Errorf("gone: %s", name)
		}
	}
}

// TestCombineOutputIsInput: an output that is one of the inputs (a node
// trace, a snapshot file, offsets.jsonl, a Kineto trace; named as it is,
// through a symbolic link, a hard link or a linked directory; --output
// itself or an output named after it) is refused before anything is read,
// and every input is left as it was. Before, combine replaced the input
// and exited 0, and the next combine failed with "node id mismatch".
func TestCombineOutputIsInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup returns the inputs, the offsets file and the output.
		setup func(t *testing.T, dir string, in []Input, offs, bad string) ([]Input, string, string)
		want  string
	}{
		{"node trace", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			return in, bad, in[1].Trace
		}, "--output DIR/node1.xplane.pb is the input trace of node 1 (same file)"},
		{"snapshots", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			return in, bad, in[0].Snapshots
		}, "--output DIR/node0.snapshots.pb is the snapshots of node 0 (same file)"},
		{"offsets.jsonl", func(t *testing.T, dir string, in []Input, offs, _ string) ([]Input, string, string) {
			// Reading first would fail on node 0's trace instead.
			junk(t, in[0].Trace)
			return in, offs, offs
		}, "--output DIR/offsets.jsonl is the offsets file (same file)"},
		{"Kineto trace", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			k := writeFile(t, filepath.Join(dir, "rank0.json"), smallKineto("0"))
			return []Input{{Node: 0, Trace: k}}, bad, k
		}, "--output DIR/rank0.json is the input trace of node 0 (same file)"},
		{"symbolic link", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			link := filepath.Join(dir, "link.xplane.pb")
			if err := os.Symlink("node1.xplane.pb", link); err != nil {
				t.Fatal(err)
			}
			return in, bad, link
		}, "--output DIR/link.xplane.pb is the input trace of node 1 (DIR/node1.xplane.pb, same file)"},
		{"hard link", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			hard := filepath.Join(dir, "hard.xplane.pb")
			if err := os.Link(in[1].Trace, hard); err != nil {
				t.Fatal(err)
			}
			return in, bad, hard
		}, "--output DIR/hard.xplane.pb is the input trace of node 1 (DIR/node1.xplane.pb, same file)"},
		{"linked directory", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			other := filepath.Join(dir, "sub")
			if err := os.Symlink(".", other); err != nil {
				t.Fatal(err)
			}
			in[1].Trace = filepath.Join(other, "node1.xplane.pb")
			return in, bad, filepath.Join(dir, "node1.xplane.pb")
		}, "--output DIR/node1.xplane.pb is the input trace of node 1 (DIR/sub/node1.xplane.pb, same file)"},
		{"Chrome trace named after --output", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			k := writeFile(t, filepath.Join(dir, "combined.trace.json.gz"), smallKineto("0"))
			return []Input{{Node: 0, Trace: k}}, bad, filepath.Join(dir, "combined.xplane.pb")
		}, "the Chrome trace DIR/combined.trace.json.gz (beside --output) is the input trace of node 0 (same file)"},
		{"metadata named after --output", func(t *testing.T, dir string, in []Input, _, bad string) ([]Input, string, string) {
			in[0].Snapshots = writeFile(t, filepath.Join(dir, "x.metadata.json"), "{}")
			return in, bad, filepath.Join(dir, "x.xplane.pb")
		}, "the metadata DIR/x.metadata.json (beside --output) is the snapshots of node 0 (same file)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, offs := writeSynth(t, dir, []synthNode{{}, {off: 3e6, rOff: 1e6}}, 4)
			// An offsets file that reading would refuse: the refusal below
			// comes first, before anything is read.
			bad := writeFile(t, filepath.Join(dir, "bad-offsets.jsonl"), "not an offsets file\n")
			in, offsFile, out := tc.setup(t, dir, in, offs, bad)
			before := tree(t, dir)
			_, err := Combine(in, Options{Offsets: offsFile, Output: out, Validate: true})
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Combine: %v\nwant an error saying %q", err, want)
			}
			sameTree(t, before, tree(t, dir))
		})
	}
}

// TestCombineKinetoOutIsInputDir: --kineto-out naming the directory of the
// Kineto inputs (or a link to it), where the aligned copies would replace
// the raw traces of the same names, is refused before anything is read;
// so are two Kineto inputs of one file name, whose copies would be one
// file. Before, the raw traces were replaced.
func TestCombineKinetoOutIsInputDir(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	if err := os.Mkdir(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	k0 := writeFile(t, filepath.Join(raw, "rank0.json"), smallKineto("0"))
	k1 := writeFile(t, filepath.Join(raw, "rank1.json"), smallKineto("1"))
	if err := os.Symlink("raw", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	k1b := writeFile(t, filepath.Join(other, "rank0.json"), smallKineto("1"))
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	for _, tc := range []struct {
		name string
		in   []Input
		o    Options
		want string
	}{
		{"the inputs' directory", []Input{{Node: 0, Trace: k0}, {Node: 1, Trace: k1}}, Options{KinetoDir: raw},
			"the aligned copy of DIR/raw/rank0.json in --kineto-out DIR/raw (DIR/raw/rank0.json) is the input trace of node 0 (same file)"},
		{"a link to it", []Input{{Node: 0, Trace: k0}, {Node: 1, Trace: k1}}, Options{KinetoDir: filepath.Join(dir, "link")},
			"the aligned copy of DIR/raw/rank0.json in --kineto-out DIR/link (DIR/link/rank0.json) is the input trace of node 0 (DIR/raw/rank0.json, same file)"},
		{"two inputs of one name", []Input{{Node: 0, Trace: k0}, {Node: 1, Trace: k1b}}, Options{},
			"the aligned copy of DIR/raw/rank0.json (DIR/out/combined.kineto/rank0.json) and the aligned copy of DIR/other/rank0.json (DIR/out/combined.kineto/rank0.json) are one file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tree(t, dir)
			tc.o.Output = out
			_, err := Combine(tc.in, tc.o)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Combine: %v\nwant an error saying %q", err, want)
			}
			sameTree(t, before, tree(t, dir))
		})
	}
	// Elsewhere, the same inputs combine.
	if _, err := Combine([]Input{{Node: 0, Trace: k0}, {Node: 1, Trace: k1}}, Options{Output: out}); err != nil {
		t.Fatal(err)
	}
}

// TestCombineOutputSetAllOrNothing: when one output cannot be written
// (the metadata, last), or cannot be moved into place after the others
// were, or its path is a directory, Combine fails and leaves every old
// output as it was and no new one: not the combined XSpace, its Chrome
// JSON or validate report, nor an aligned Kineto copy, nor a staging
// directory. Before, the outputs written before the metadata replaced the
// old ones.
func TestCombineOutputSetAllOrNothing(t *testing.T) {
	failing := func(step, suffix string) func(string, string) error {
		return func(s, path string) error {
			if s == step && strings.HasSuffix(path, suffix) {
				return errors.New("injected failure")
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name   string
		kineto bool
		old    bool // old outputs in place
		hook   func(step, path string) error
		dirAt  string // a directory at this output (suffix of --output's base)
		want   string
	}{
		{"metadata write fails", false, true, failing("write", ".metadata.json"), "", "write DIR/out/combined.metadata.json: injected failure"},
		{"metadata rename fails", false, true, failing("rename", ".metadata.json"), "", "move DIR/out/combined.metadata.json into place: injected failure (the outputs already moved were put back: none replaced)"},
		{"metadata rename fails, no old outputs", false, false, failing("rename", ".metadata.json"), "", "move DIR/out/combined.metadata.json into place: injected failure"},
		{"metadata is a directory", false, true, nil, ".metadata.json", "the metadata DIR/out/combined.metadata.json (beside --output) is a directory: refusing to replace it"},
		{"Kineto, metadata rename fails", true, true, failing("rename", ".metadata.json"), "", "move DIR/out/combined.metadata.json into place: injected failure"},
		{"Kineto, second copy's rename fails", true, true, failing("rename", "rank1.json"), "", "move DIR/out/combined.kineto/rank1.json into place: injected failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var in []Input
			var offs string
			if tc.kineto {
				in = []Input{{Node: 0, Trace: writeFile(t, filepath.Join(dir, "rank0.json"), smallKineto("0"))},
					{Node: 1, Trace: writeFile(t, filepath.Join(dir, "rank1.json"), smallKineto("1"))}}
				offs = writeConstantOffsets(t, dir, 0, []float64{2e5, 5e5})
			} else {
				in, offs = writeSynth(t, dir, []synthNode{{}, {off: 3e6, rOff: 1e6}}, 4)
			}
			out := filepath.Join(dir, "out", "combined.xplane.pb")
			o := Options{Offsets: offs, Output: out, Validate: true}
			if tc.old {
				// The old outputs: uncorrected, so that the new ones differ.
				res, err := Combine(in, Options{NoCorrection: true, Output: out, Validate: true})
				if err != nil {
					t.Fatal(err)
				}
				if tc.kineto && !slices.ContainsFunc(res.Files, func(f string) bool { return strings.HasSuffix(f, "rank1.json") }) {
					t.Fatalf("no aligned copies among the outputs %v", res.Files)
				}
			}
			if tc.dirAt != "" {
				if err := os.Remove(filepath.Join(dir, "out", "combined"+tc.dirAt)); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(dir, "out", "combined"+tc.dirAt, "keep"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, dir)
			o.outputHook = tc.hook
			_, err := Combine(in, o)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Combine: %v\nwant an error saying %q", err, want)
			}
			sameTree(t, before, tree(t, dir))
			// Without the failure, the outputs are replaced, every one.
			if tc.dirAt != "" {
				if err := os.RemoveAll(filepath.Join(dir, "out", "combined"+tc.dirAt)); err != nil {
					t.Fatal(err)
				}
				before = tree(t, dir)
			}
			o.outputHook = nil
			res, err := Combine(in, o)
			if err != nil {
				t.Fatal(err)
			}
			after := tree(t, dir)
			for _, f := range res.Files {
				rel, _ := filepath.Rel(dir, f)
				if tc.old && after[rel] == before[rel] {
					t.Errorf("%s was not replaced", rel)
				}
			}
			if tc.old && tc.dirAt == "" && len(after) != len(before) {
				t.Errorf("%d files after, %d before: the same outputs replaced, nothing else", len(after), len(before))
			}
		})
	}
}

// writeFile writes text to path and returns path.
func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// junk overwrites the file at path with bytes no reader accepts.
func junk(t *testing.T, path string) {
	t.Helper()
	writeFile(t, path, "\xff\xff\xff\xff not a trace")
}

// TestCombineOutputLocked: while another process holds an output set's
// lock (here another open file of this process, which flock(2) treats as
// another holder), a combine into it is refused before anything is read,
// naming the holder's PID, and the old outputs stay as they were; once
// released, the combine goes ahead and leaves no lock file. Before, two
// combines into one output set could interleave their renames.
func TestCombineOutputLocked(t *testing.T) {
	dir := t.TempDir()
	in, offs := writeSynth(t, dir, []synthNode{{}, {off: 3e6, rOff: 1e6}}, 4)
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	if _, err := Combine(in, Options{NoCorrection: true, Output: out}); err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Take(LockPath(out))
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	_, err = Combine(in, Options{Offsets: offs, Output: out})
	want := "combine: --output " + out + " is being written by another process (PID " + strconv.Itoa(os.Getpid()) + " holds its lock " + filepath.Join(dir, "out", ".combined.lock") + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Combine under another's lock: %v\nwant %q", err, want)
	}
	sameTree(t, before, tree(t, dir))
	l.Release()
	if _, err := Combine(in, Options{Offsets: offs, Output: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockPath(out)); !os.IsNotExist(err) {
		t.Errorf("lock file after combine: %v", err)
	}
}
