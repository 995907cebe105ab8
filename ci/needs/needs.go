// Package needs skips a test that needs what this machine lacks (a program
// from a Debian package, root, a capability) with one line that says what
// is missing and how to get it, and records that line for the list that
// `make test` prints at its end (ci/deps.sh report).
//
// The packages themselves are listed, and installed where possible, by
// ci/deps.sh.
package needs

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	// EnvSkipLog names the file every skip is appended to, one line each;
	// make test sets it. Unset, skips are not recorded.
	EnvSkipLog = "CHRONOSYNC_SKIP_LOG"
	// EnvPretendMissing lists Debian packages, separated by spaces, that
	// count as missing although installed: it tries the skip path without
	// uninstalling anything. ci/deps.sh reads it too.
	EnvPretendMissing = "CHRONOSYNC_PRETEND_MISSING"
)

// Command skips t unless each program of bins is on $PATH; pkg is the
// Debian package that installs them. A pkg listed in
// $CHRONOSYNC_PRETEND_MISSING counts as missing.
func Command(t testing.TB, pkg string, bins ...string) {
	t.Helper()
	Commands(t, Package{pkg, bins})
}

// Package is a Debian package and the programs a test needs from it.
type Package struct {
	Name string
	Bins []string
}

// Commands skips t unless the programs of every package of pkgs are on
// $PATH, with one line that names all the packages missing, so that one
// apt-get install gets them all.
func Commands(t testing.TB, pkgs ...Package) {
	t.Helper()
	var names, why []string
	for _, p := range pkgs {
		if reason := missing(p); reason != "" {
			names = append(names, p.Name)
			why = append(why, reason)
		}
	}
	if len(names) == 0 {
		return
	}
	word := "package"
	if len(names) > 1 {
		word = "packages"
	}
	Skip(t, fmt.Sprintf("needs %s %s (%s): apt-get install %s",
		word, strings.Join(names, " and "), strings.Join(why, "; "), strings.Join(names, " ")))
}

// missing says why p counts as missing, or "" when its programs are there.
func missing(p Package) string {
	if slices.Contains(strings.Fields(os.Getenv(EnvPretendMissing)), p.Name) {
		return EnvPretendMissing + " lists it"
	}
	for _, bin := range p.Bins {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not on $PATH"
		}
	}
	return ""
}

// Root skips t unless the test runs as root; why says what root is for
// ("to create network namespaces").
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "needs root, "+why+": run make test as root")
	}
}

// Available skips t when err, the answer of a check such as
// netlab.Available (network namespaces need root), is not nil; the skip
// line is err's text.
func Available(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		Skip(t, err.Error()+": run make test as root")
	}
}

// Skip skips t with reason, first appending a line with t's package
// directory, name and reason to the skip log when make test keeps one.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if path := os.Getenv(EnvSkipLog); path != "" {
		if err := record(path, t.Name(), reason); err != nil {
			t.Logf("needs: recording the skip in %s: %v", path, err)
		}
	}
	t.Skip(reason)
}

// record appends "SKIP DIR NAME: REASON" to the file at path, DIR being the
// working directory (the test's package directory under go test). One
// write of one line with O_APPEND, so that the test binaries that go test
// runs in parallel do not interleave their lines.
func record(path, name, reason string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "SKIP %s %s: %s\n", dir, name, reason)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
