//go:build linux

package shaper

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chronosync/chronosync/real/netlab"
)

// testPrefixes are the prefixes this test binary used, for TestMain's
// leak check.
var testPrefixes struct {
	sync.Mutex
	list []string
}

// testPrefix returns a fresh prefix that TestMain checks for leftovers.
func testPrefix() string {
	p := netlab.NewPrefix()
	testPrefixes.Lock()
	testPrefixes.list = append(testPrefixes.list, p)
	testPrefixes.Unlock()
	return p
}

// TestMain fails the run if any namespace of a prefix the tests used is
// still listed at the end. In a CPU hog child (see startHogs) it spins
// instead, and in a shaper child (see StartProcess) it relays.
func TestMain(m *testing.M) {
	MaybeChild()
	if os.Getenv(hogEnv) != "" {
		hog()
	}
	code := m.Run()
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		for _, p := range testPrefixes.list {
			if strings.HasPrefix(e.Name(), p+"-") {
				fmt.Fprintf(os.Stderr, "leaked namespace %s\n", e.Name())
				code = 1
			}
		}
	}
	os.Exit(code)
}
