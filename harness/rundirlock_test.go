package harness

import (
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dirFiles is the contents of every file directly in dir.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range ents {
		if !e.IsDir() {
			files[e.Name()] = string(read(t, filepath.Join(dir, e.Name())))
		}
	}
	return files
}

// TestRunDirLocked: while one process holds a run directory's lock (here
// this test, through another open file, which flock(2) treats as another
// holder), a run into the directory is refused, naming the holder's PID,
// and the run directory there is left as it was; once released the run
// goes ahead. A lock file left by a dead process (no flock on it) is
// stale and taken over. The lock file goes with its holder. Before, two
// processes given one --out both ran, and the last to finish replaced the
// other's directory.
func TestRunDirLocked(t *testing.T) {
	sc := parse(t, small)
	out := filepath.Join(t.TempDir(), "run")
	runOnce(t, sc, Options{Out: out})
	before := dirFiles(t, out)

	lock, err := LockRunDir(out)
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(os.Getpid())
	if got := strings.TrimSpace(string(read(t, LockPath(out)))); got != pid {
		t.Errorf("lock file says %q, want the holder's PID %s", got, pid)
	}
	for _, tc := range []struct {
		name string
		try  func() error
	}{
		{"lock", func() error {
			l, err := LockRunDir(out)
			l.Release()
			return err
		}},
		{"run", func() error {
			_, err := Run(sc, Options{Out: out})
			return err
		}},
	} {
		err := tc.try()
		want := "run directory " + out + " is in use by another process (PID " + pid + " holds its lock " + LockPath(out) + ")"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s while the lock is held: %v\nwant %q", tc.name, err, want)
		}
	}
	if after := dirFiles(t, out); !maps.Equal(before, after) {
		t.Errorf("the run directory changed under a held lock: files %v, were %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	lock.Release()
	if _, err := os.Stat(LockPath(out)); !os.IsNotExist(err) {
		t.Errorf("lock file after release: %v", err)
	}
	runOnce(t, sc, Options{Out: out})

	// A dead holder's lock file: its PID, and no flock.
	if err := os.WriteFile(LockPath(out), []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runOnce(t, sc, Options{Out: out})
	if _, err := os.Stat(LockPath(out)); !os.IsNotExist(err) {
		t.Errorf("stale lock file after a run took it over: %v", err)
	}
}

// TestRunDirOtherRank: a run directory that another cluster rank wrote
// (its summary.json's real.rank, or for a failed run without a summary,
// its run.log's "cluster node N of M" line) is refused, never replaced,
// before anything runs: by another rank and by a single-host run. Its own
// rank may replace it, as any run replaces its own earlier run.
func TestRunDirOtherRank(t *testing.T) {
	sc := parse(t, small)
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	dir := t.TempDir()
	rankDir := func(name string, files map[string]string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, text := range files {
			if err := os.WriteFile(filepath.Join(d, f), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	done := rankDir("done", map[string]string{FileManifest: "{}", FileSummary: `{"status": "ok", "real": {"rank": 1}}`})
	failed := rankDir("failed", map[string]string{FileFailure: "run failed", FileLog: "real backend: ...\ncluster node 2 of 3 at 127.0.0.3\n"})
	for _, tc := range []struct {
		name string
		out  string
		rank *int
		want string
	}{
		{"rank 0 over rank 1", done, new(int), "run directory " + done + " holds cluster rank 1's run, and this is rank 0: refusing to replace it"},
		{"single host over rank 1", done, nil, "run directory " + done + " holds cluster rank 1's run; refusing to replace it with a single-host run"},
		{"rank 0 over failed rank 2", failed, new(int), "run directory " + failed + " holds cluster rank 2's run, and this is rank 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := dirFiles(t, tc.out)
			o := Options{Out: tc.out}
			if tc.rank != nil {
				o.Backend, o.Cluster = "real", &ClusterNode{Addresses: addrs, Rank: *tc.rank}
			}
			_, err := Run(sc, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v\nwant %q", err, tc.want)
			}
			if after := dirFiles(t, tc.out); !maps.Equal(before, after) {
				t.Errorf("the other rank's directory changed")
			}
		})
	}
	// Its own rank's run: checkOwner lets it replace the directory.
	one, two := 1, 2
	if err := checkOwner(done, &one); err != nil {
		t.Error(err)
	}
	if err := checkOwner(failed, &two); err != nil {
		t.Error(err)
	}
}
