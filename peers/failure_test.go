package peers

import (
	"net/netip"
	"os/exec"
	"strings"
	"testing"
)

// TestStartFailure checks that a daemon that cannot start is reported with
// its output, and that the daemon of the pair already started is stopped.
func TestStartFailure(t *testing.T) {
	needDaemons(t)
	v := newVeth(t)

	_, _, err := StartPTP(PTPConfig{
		MasterNS: v.nsA, MasterIface: v.ifA, SlaveNS: v.nsB, SlaveIface: "nosuchif0",
		LogSyncInterval: -4, Dir: t.TempDir(),
	})
	if err == nil || !strings.Contains(err.Error(), "ptp4l (slave) exited while starting") {
		t.Errorf("StartPTP with a missing interface: %v", err)
	} else {
		t.Logf("StartPTP with a missing interface: %v", err)
	}
	if pids, _ := exec.Command("ip", "netns", "pids", v.nsA).Output(); len(strings.TrimSpace(string(pids))) > 0 {
		t.Errorf("processes left in the master's namespace: %s", pids)
	}

	_, _, err = StartChrony(ChronyConfig{
		ServerNS: v.nsA, ServerAddr: netip.MustParseAddr("10.78.0.1"),
		ClientNS: v.nsB + "-missing", Poll: -4, Dir: t.TempDir(),
	})
	if err == nil || !strings.Contains(err.Error(), "chronyd (client) exited while starting") {
		t.Errorf("StartChrony with a missing namespace: %v", err)
	} else {
		t.Logf("StartChrony with a missing namespace: %v", err)
	}
	if pids, _ := exec.Command("ip", "netns", "pids", v.nsA).Output(); len(strings.TrimSpace(string(pids))) > 0 {
		t.Errorf("processes left in the server's namespace: %s", pids)
	}
}
