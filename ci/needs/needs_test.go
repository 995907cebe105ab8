package needs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTB records a skip instead of ending the test, so that the helpers'
// skips can be checked from the outside.
type fakeTB struct {
	testing.TB // nil: a call to anything not overridden fails the test loudly
	name       string
	skipped    string
}

func (f *fakeTB) Helper()          {}
func (f *fakeTB) Name() string     { return f.name }
func (f *fakeTB) Skip(args ...any) { f.skipped = fmt.Sprint(args...) }

// readLog returns the skip log's lines, none when it does not exist.
func readLog(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestCommand(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pkg, bin, pretend string
		want                    string // the skip reason; "" for no skip
	}{
		{"present", "dash", "sh", "", ""},
		{"absent", "nopkg", "chronosync-no-such-program", "",
			"needs package nopkg (chronosync-no-such-program is not on $PATH): apt-get install nopkg"},
		{"pretended", "dash", "sh", "chrony dash linuxptp",
			"needs package dash (CHRONOSYNC_PRETEND_MISSING lists it): apt-get install dash"},
		{"other pretended", "dash", "sh", "chrony", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "skips")
			t.Setenv(EnvSkipLog, log)
			t.Setenv(EnvPretendMissing, tc.pretend)
			f := &fakeTB{name: "TestX/y"}
			Command(f, tc.pkg, tc.bin)
			if f.skipped != tc.want {
				t.Errorf("skip reason %q, want %q", f.skipped, tc.want)
			}
			lines := readLog(t, log)
			switch {
			case tc.want == "" && len(lines) != 0:
				t.Errorf("skip log %q, want none", lines)
			case tc.want != "" && (len(lines) != 1 || lines[0] != "SKIP "+wd+" TestX/y: "+tc.want):
				t.Errorf("skip log %q, want the one line %q", lines, "SKIP "+wd+" TestX/y: "+tc.want)
			}
		})
	}
}

// TestSkipUnlogged: without make test's skip log, a skip records nothing.
func TestSkipUnlogged(t *testing.T) {
	t.Setenv(EnvSkipLog, "")
	f := &fakeTB{name: "TestX"}
	Available(f, errors.New("netlab unavailable: no"))
	if want := "netlab unavailable: no: run make test as root"; f.skipped != want {
		t.Errorf("skip reason %q, want %q", f.skipped, want)
	}
}

// TestSkipAppends: skips append to the log, one line each.
func TestSkipAppends(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(EnvSkipLog, log)
	for _, name := range []string{"TestA", "TestB"} {
		Skip(&fakeTB{name: name}, "because")
	}
	lines := readLog(t, log)
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " TestA: because") || !strings.HasSuffix(lines[1], " TestB: because") {
		t.Errorf("skip log %q, want TestA's line then TestB's", lines)
	}
}

// TestCommands: one skip line names every missing package, so that one
// apt-get install gets them all; present packages are not named.
func TestCommands(t *testing.T) {
	t.Setenv(EnvSkipLog, "")
	t.Setenv(EnvPretendMissing, "chrony")
	f := &fakeTB{name: "TestX"}
	Commands(f,
		Package{Name: "dash", Bins: []string{"sh"}},
		Package{Name: "chrony", Bins: []string{"sh"}},
		Package{Name: "nopkg", Bins: []string{"chronosync-no-such-program"}})
	want := "needs packages chrony and nopkg (CHRONOSYNC_PRETEND_MISSING lists it; chronosync-no-such-program is not on $PATH): apt-get install chrony nopkg"
	if f.skipped != want {
		t.Errorf("skip reason %q, want %q", f.skipped, want)
	}
	f = &fakeTB{name: "TestY"}
	Commands(f, Package{Name: "dash", Bins: []string{"sh"}})
	if f.skipped != "" {
		t.Errorf("skipped %q with every package present", f.skipped)
	}
}
