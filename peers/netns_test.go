package peers

import (
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
)

// nsPrefix starts the name of every namespace these tests create, so a
// later run can sweep what a crashed one left. The names, csp<6 hex>-a and
// -b, follow real/netlab's ^cs[a-z0-9]{1,8}- so its Sweep("") finds them.
const nsPrefix = "csp"

// veth is a veth pair between two namespaces made for one test.
type veth struct {
	nsA, nsB     string
	ifA, ifB     string
	addrA, addrB netip.Addr
}

// newVeth creates namespaces csp<6 hex>-a and -b joined by a veth pair with
// 10.78.0.1/24 and 10.78.0.2/24, and deletes them (and with them the pair)
// when the test ends, whether it passes or not.
func newVeth(t *testing.T) veth {
	t.Helper()
	b := make([]byte, 3)
	rand.Read(b)
	id := nsPrefix + hex.EncodeToString(b)
	v := veth{
		nsA: id + "-a", nsB: id + "-b", ifA: id + "a", ifB: id + "b",
		addrA: netip.MustParseAddr("10.78.0.1"), addrB: netip.MustParseAddr("10.78.0.2"),
	}
	t.Cleanup(func() {
		for _, ns := range []string{v.nsA, v.nsB} {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil &&
				!strings.Contains(string(out), "No such file") {
				t.Errorf("ip netns del %s: %v: %s", ns, err, out)
			}
		}
	})
	for _, args := range [][]string{
		{"netns", "add", v.nsA},
		{"netns", "add", v.nsB},
		{"link", "add", v.ifA, "netns", v.nsA, "type", "veth", "peer", "name", v.ifB, "netns", v.nsB},
		{"-n", v.nsA, "addr", "add", v.addrA.String() + "/24", "dev", v.ifA},
		{"-n", v.nsB, "addr", "add", v.addrB.String() + "/24", "dev", v.ifB},
		{"-n", v.nsA, "link", "set", "lo", "up"},
		{"-n", v.nsB, "link", "set", "lo", "up"},
		{"-n", v.nsA, "link", "set", v.ifA, "up"},
		{"-n", v.nsB, "link", "set", v.ifB, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return v
}

// sweepStale deletes namespaces of this package's tests that are older than
// ten minutes and have no process left: what a crashed run left behind.
func sweepStale(t *testing.T) {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if len(name) != len(nsPrefix)+8 || !strings.HasPrefix(name, nsPrefix) ||
			!(strings.HasSuffix(name, "-a") || strings.HasSuffix(name, "-b")) {
			continue
		}
		info, err := os.Stat(filepath.Join("/run/netns", name))
		if err != nil || time.Since(info.ModTime()) < 10*time.Minute {
			continue
		}
		if pids, err := exec.Command("ip", "netns", "pids", name).Output(); err != nil || len(strings.TrimSpace(string(pids))) > 0 {
			continue
		}
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Logf("sweeping stale namespace %s: %v: %s", name, err, out)
		} else {
			t.Logf("swept stale namespace %s", name)
		}
	}
}

// needDaemons skips the test unless it runs as root with ip, chronyd and
// ptp4l on $PATH.
func needDaemons(t *testing.T) {
	t.Helper()
	needs.Root(t, "to create network namespaces")
	needs.Commands(t,
		needs.Package{Name: "iproute2", Bins: []string{"ip"}},
		needs.Package{Name: "chrony", Bins: []string{"chronyd"}},
		needs.Package{Name: "linuxptp", Bins: []string{"ptp4l"}})
}
