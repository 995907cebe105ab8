//go:build mpi

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/phasegap/sweep"
	"github.com/chronosync/chronosync/real/netlab"
)

// TestPhasegapMPINet runs two points of transport mpi-net: two ranks in
// network namespaces over OpenMPI's TCP transport, through the shaper's
// links without a preset and with lat_1ms. Each run records transport
// tcp and its preset; under lat_1ms (1 ms one way) no iteration can end
// in under a millisecond, and without it the iterations take less; the
// run's log shows mpirun started in node 0's namespace; and no
// namespace is left behind.
func TestPhasegapMPINet(t *testing.T) {
	needs.Command(t, "openmpi-bin", "mpirun")
	needs.Command(t, "iproute2", "ip")
	needs.Available(t, netlab.Available())
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	m, err := sweep.Parse([]byte(`name: mpinet
transports: [mpi-net]
base: {N: 100000, iters: 30, warmup: 3, poll_every: 4096}
link: {delay: 20us}
sweeps:
  - name: lat
    ranks: [2]
    threads: [1]
    halo: [64]
    mode: [phase_nb]
    preset: [none, lat_1ms]
`), "mpinet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := namespaces(t)
	r := &sweepRunner{m: m, exe: bin, cpus: 2, root: true}
	out := t.TempDir()
	iter := map[string]float64{}
	for _, pt := range m.Plan() {
		if why := r.Skip(pt); why != "" {
			t.Fatalf("%s skipped: %s", pt.ID(), why)
		}
		dir := pt.Dir(out)
		if _, err := r.Run(context.Background(), pt, dir); err != nil {
			t.Fatalf("%s: %v", pt.ID(), err)
		}
		row := readRow(t, filepath.Join(dir, "results.csv"))
		if row["transport"] != "tcp" || row["impairment"] != pt.Preset || row["P"] != "2" {
			t.Errorf("%s: transport %q, impairment %q, P %q; want tcp, %s, 2", pt.ID(), row["transport"], row["impairment"], row["P"], pt.Preset)
		}
		iter[pt.Preset] = num(t, row, "t_iter_mean")
		log, err := os.ReadFile(filepath.Join(dir, "mpirun.log"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), "-n0 mpirun -np 2") || !strings.Contains(string(log), "impairment userspace") {
			t.Errorf("%s: mpirun.log does not show mpirun in node 0's namespace over the shaper:\n%s", pt.ID(), log)
		}
	}
	t.Logf("t_iter: %.1f µs without a preset, %.1f µs under lat_1ms", iter["none"], iter["lat_1ms"])
	if iter["lat_1ms"] < 1000 || iter["none"] >= iter["lat_1ms"] {
		t.Errorf("t_iter %.1f µs without a preset, %.1f µs under lat_1ms: want lat_1ms ≥ 1000 µs and above the other", iter["none"], iter["lat_1ms"])
	}
	if after := namespaces(t); after != before {
		t.Errorf("network namespaces before the runs:\n%s\nafter:\n%s", before, after)
	}
}

// namespaces lists the network namespaces (ip netns list).
func namespaces(t *testing.T) string {
	t.Helper()
	b, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v: %s", err, b)
	}
	return string(b)
}
