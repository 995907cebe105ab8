package cluster

import (
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// TestLockNode: one node per host, cluster and rank. A second lock of the
// same rank is refused naming the holder's PID; another rank, or another
// cluster (other addresses), is a lock of its own; the lock file is named
// by the cluster's ID and the rank, in a state directory created on
// demand.
func TestLockNode(t *testing.T) {
	sc := &scenario.Scenario{Name: "c"}
	a := &Cluster{Scenario: sc, Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")}}
	b := &Cluster{Scenario: sc, Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.3")}}
	if ID(a) == ID(b) || len(ID(a)) != 16 {
		t.Fatalf("IDs %q and %q: want two of 16 hex digits", ID(a), ID(b))
	}
	state := filepath.Join(t.TempDir(), "state")
	l, err := LockNode(state, a, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if want := filepath.Join(state, "node-"+ID(a)+"-rank0.lock"); NodeLockPath(state, a, 0) != want {
		t.Errorf("NodeLockPath = %s, want %s", NodeLockPath(state, a, 0), want)
	}
	if _, err := os.Stat(NodeLockPath(state, a, 0)); err != nil {
		t.Errorf("lock file: %v", err)
	}
	_, err = LockNode(state, a, 0)
	if err == nil || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())+" holds") {
		t.Errorf("second lock of rank 0: err = %v, want it refused naming PID %d", err, os.Getpid())
	}
	for _, other := range []struct {
		c    *Cluster
		rank int
	}{{a, 1}, {b, 0}} {
		l, err := LockNode(state, other.c, other.rank)
		if err != nil {
			t.Errorf("cluster %s rank %d: %v", ID(other.c), other.rank, err)
			continue
		}
		l.Release()
	}
}
