package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/mpirun"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/sweep"
)

// TestMPINetAgent: the launch agent runs the command line mpirun gives it
// in the namespace of the node whose address it gets, through a shell
// (as ssh would), and refuses an address that is no node's; the hostfile
// gives each node one slot, in order.
func TestMPINetAgent(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for ip that prints its arguments, one a line.
	ip := filepath.Join(dir, "ip")
	if err := os.WriteFile(ip, []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	nodes := []netNode{{"10.77.0.1", "cs1-n0"}, {"10.77.0.2", "cs1-n1"}, {"10.77.0.3", "cs1-n2"}}
	hosts, agent, err := writeNetLaunch(dir, nodes, ip)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(hosts)
	if err != nil {
		t.Fatal(err)
	}
	if want := "10.77.0.1 slots=1\n10.77.0.2 slots=1\n10.77.0.3 slots=1\n"; string(b) != want {
		t.Errorf("hostfile:\n%s\nwant:\n%s", b, want)
	}
	out, err := exec.Command(agent, "10.77.0.2", "orted", "-mca", "ess", `"env"`).CombinedOutput()
	if err != nil {
		t.Fatalf("agent: %v: %s", err, out)
	}
	if want := "[netns]\n[exec]\n[cs1-n1]\n[/bin/sh]\n[-c]\n[orted -mca ess \"env\"]\n"; string(out) != want {
		t.Errorf("agent ran ip with:\n%s\nwant:\n%s", out, want)
	}
	out, err = exec.Command(agent, "10.77.0.9", "orted").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "10.77.0.9 is no node of this network") {
		t.Errorf("agent with an unknown host: %v: %s", err, out)
	}
}

// TestSweepMPINetSkips: an mpi-net point says why it cannot run (root,
// namespaces, CPUs), takes the link presets that an mpi point refuses,
// and --oversubscribe runs a point with more threads than CPUs.
func TestSweepMPINetSkips(t *testing.T) {
	pt := func(tr, preset string, ranks, threads int) sweep.Point {
		q := params.DefaultParams()
		q.Ranks, q.Threads = ranks, threads
		return sweep.Point{Sweep: "s", Transport: tr, Params: q, Preset: preset}
	}
	built := ""
	if !mpirun.Built {
		built = "built without MPI"
	} else if _, err := exec.LookPath("mpirun"); err != nil {
		built = "no mpirun on PATH"
	}
	for _, tc := range []struct {
		name string
		r    sweepRunner
		pt   sweep.Point
		want string // "" runs; else a part of the reason
	}{
		{"mpi refuses a preset", sweepRunner{cpus: 2, root: true}, pt(sweep.TransportMPI, "lat_1ms", 2, 1), "use mpi-net, sim or real"},
		{"mpi-net takes it", sweepRunner{cpus: 2, root: true}, pt(sweep.TransportMPINet, "lat_1ms", 2, 1), built},
		{"mpi-net needs root", sweepRunner{cpus: 2}, pt(sweep.TransportMPINet, "none", 2, 1), "mpi-net needs root"},
		{"too many namespaces", sweepRunner{cpus: 64, root: true}, pt(sweep.TransportMPINet, "none", maxRealRanks+1, 1), "namespaces here"},
		{"oversubscribed", sweepRunner{cpus: 2, root: true}, pt(sweep.TransportMPINet, "none", 2, 2), "--oversubscribe runs it"},
		{"--oversubscribe", sweepRunner{cpus: 2, root: true, oversubscribe: true}, pt(sweep.TransportMPINet, "none", 2, 2), built},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.r.Skip(tc.pt)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Skip = %q, want %q", got, tc.want)
			}
		})
	}
}
