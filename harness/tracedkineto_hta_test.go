package harness

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/kineto"
)

// HolisticTraceAnalysis's kernel classes (hta/common/types.py,
// CommunicateKernelGroupingPattern, and ComputeKernelGroupingPattern, an
// inverse match: a kernel is compute when it does not match htaNotCompute).
var (
	htaComm       = regexp.MustCompile(`(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)`)
	htaNotCompute = regexp.MustCompile(`(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)`)
)

// kinetoHTA is traced3 with Kineto traces, its training starting on a
// whole second so that the nodes' clocks (±3 ms) put their traces' first
// events on both sides of it: the raw traces get different bases.
var kinetoHTA = strings.NewReplacer("  snapshot_period: 1s\n", "  snapshot_period: 1s\n  kineto: true\n",
	"start_delay: 2500ms", "start_delay: 3000ms").Replace(traced3)

// TestKinetoOutForHTA checks, on the combined Kineto copies of a simulated
// three-rank job, what HTA relies on to read them as one job: the
// directory holds the ranks' traces and nothing else; every copy has the
// one base the metadata names and distributedInfo.rank = its rank; no
// event lies before the base; collective kernels are communication to
// HTA and the others computation; kernels carry device and stream; every
// launch→kernel flow is an s/f pair of cat ac2g with one id, at the launch
// and the kernel of that correlation; each collective's kernels overlap
// in time on all ranks (the raw traces' do not all); and every thread's
// events keep their order.
func TestKinetoOutForHTA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	runOnce(t, parse(t, kinetoHTA), Options{Out: dir})
	kdir := filepath.Join(dir, "combined-kineto.kineto")
	ents, err := os.ReadDir(kdir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"node0.pt.trace.json.gz", "node1.pt.trace.json.gz", "node2.pt.trace.json.gz"}
	if !slices.Equal(names, want) {
		t.Fatalf("%s holds %q, want only the ranks' traces %q", kdir, names, want)
	}
	var md struct {
		KinetoBaseNS int64 `json:"kineto_base_ns"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(dir, "combined-kineto.metadata.json")), &md); err != nil {
		t.Fatal(err)
	}
	rawBases := map[int64]bool{}
	var raw, out [][]kineto.Kernel
	for i, name := range want {
		in, err := kineto.ReadWith(filepath.Join(dir, name), kineto.DecodeOptions{Raw: true})
		if err != nil {
			t.Fatal(err)
		}
		rawBases[in.BaseTimeNs] = true
		tr, err := kineto.ReadWith(filepath.Join(kdir, name), kineto.DecodeOptions{Raw: true})
		if err != nil {
			t.Fatal(err)
		}
		if tr.BaseTimeNs != md.KinetoBaseNS || md.KinetoBaseNS == 0 {
			t.Errorf("%s: base %d, want the shared %d", name, tr.BaseTimeNs, md.KinetoBaseNS)
		}
		if tr.Rank != i || tr.WorldSize != 3 {
			t.Errorf("%s: rank %d of %d, want %d of 3", name, tr.Rank, tr.WorldSize, i)
		}
		checkHTAKernels(t, name, tr)
		checkHTAFlows(t, name, tr)
		checkLineOrder(t, name, in, tr)
		raw, out = append(raw, kineto.Collectives(in)), append(out, kineto.Collectives(tr))
	}
	if len(rawBases) < 2 {
		t.Errorf("the raw traces share one base %v: the test checks nothing about unifying them", rawBases)
	}
	if n := overlapping(t, raw); n == len(raw[0]) {
		t.Errorf("all %d collectives overlap on all ranks in the raw traces: the test checks nothing about the base", n)
	}
	if n := overlapping(t, out); n != len(out[0]) {
		t.Errorf("%d of %d collectives overlap on all ranks in the copies, want all", n, len(out[0]))
	}
	t.Logf("raw bases %v, shared %d; collectives overlapping on all ranks: raw %d, copies %d of %d",
		rawBases, md.KinetoBaseNS, overlapping(t, raw), overlapping(t, out), len(out[0]))
}

// checkHTAKernels: every event is at or after the base; every kernel
// names its device and stream, and is communication to HTA exactly when it
// is a collective.
func checkHTAKernels(t *testing.T, name string, tr *kineto.Trace) {
	t.Helper()
	colls := 0
	for _, e := range tr.Events {
		if e.TsNs < 0 {
			t.Fatalf("%s: %s %q at ts %d ns, before the base", name, e.Ph, e.Name, e.TsNs)
		}
		if e.Cat != "kernel" {
			continue
		}
		if e.Args["device"] != "0" || e.Args["stream"] != e.Tid || e.Pid != "0" {
			t.Errorf("%s: kernel %q: device %q stream %q on pid %s tid %s", name, e.Name, e.Args["device"], e.Args["stream"], e.Pid, e.Tid)
		}
		coll := strings.Contains(e.Name, "AllReduce") || strings.Contains(e.Name, "AllGather") || strings.Contains(e.Name, "Broadcast")
		comm, compute := htaComm.MatchString(e.Name), !htaNotCompute.MatchString(e.Name)
		if comm != coll || compute == coll {
			t.Errorf("%s: kernel %q (collective %v): HTA sees communication %v, computation %v", name, e.Name, coll, comm, compute)
		}
		if coll {
			colls++
		}
	}
	if colls != 5*4 {
		t.Errorf("%s: %d collective kernels, want 20", name, colls)
	}
}

// checkHTAFlows: each flow is one s (cat ac2g, on the cuda_runtime launch
// of its correlation, at its ts) and one f (on the kernel of that
// correlation, at its ts), with the id the correlation.
func checkHTAFlows(t *testing.T, name string, tr *kineto.Trace) {
	t.Helper()
	launch, kernel := map[string]kineto.Event{}, map[string]kineto.Event{}
	var flows []kineto.Event
	for _, e := range tr.Events {
		switch {
		case e.Ph == "s" || e.Ph == "f":
			flows = append(flows, e)
		case e.Cat == "cuda_runtime":
			launch[e.Args["correlation"]] = e
		case e.Cat == "kernel":
			kernel[e.Args["correlation"]] = e
		}
	}
	ends := map[string]string{}
	for _, f := range flows {
		id := flowID(f)
		at := launch[id]
		if f.Ph == "f" {
			at = kernel[id]
		}
		if f.Cat != "ac2g" || at.Name == "" || f.TsNs != at.TsNs || f.Pid != at.Pid || f.Tid != at.Tid {
			t.Errorf("%s: flow %s %q (cat %s) at %d on %s/%s; its event %q at %d on %s/%s", name, f.Ph, id, f.Cat, f.TsNs, f.Pid, f.Tid,
				at.Name, at.TsNs, at.Pid, at.Tid)
		}
		ends[id] += f.Ph
	}
	if len(ends) != len(kernel) || len(kernel) == 0 {
		t.Errorf("%s: %d flows for %d kernels", name, len(ends), len(kernel))
	}
	for id, e := range ends {
		if e != "sf" {
			t.Errorf("%s: flow %s has %q, want one s then one f", name, id, e)
		}
	}
}

// checkLineOrder: on every (pid, tid), the copy's events in the raw
// trace's order of start have non-decreasing starts.
func checkLineOrder(t *testing.T, name string, in, out *kineto.Trace) {
	t.Helper()
	byLine := map[string][]int{}
	for i, e := range in.Events {
		if e.Ph != "M" {
			l := e.Pid + "/" + e.Tid
			byLine[l] = append(byLine[l], i)
		}
	}
	for l, idx := range byLine {
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(in.Events[a].TsNs, in.Events[b].TsNs) })
		for k := 1; k < len(idx); k++ {
			if a, b := out.Events[idx[k-1]], out.Events[idx[k]]; b.TsNs < a.TsNs {
				t.Errorf("%s: line %s: %q at %d after %q at %d", name, l, b.Name, b.TsNs, a.Name, a.TsNs)
			}
		}
	}
}

// overlapping counts the collectives (the i-th collective kernel of each
// rank) whose kernels overlap in time on all ranks, times as HTA reads
// them: ts compared across ranks as written.
func overlapping(t *testing.T, ranks [][]kineto.Kernel) int {
	t.Helper()
	n := 0
	for i := range ranks[0] {
		latest, earliest := ranks[0][i].StartNs, ranks[0][i].EndNs
		for _, r := range ranks[1:] {
			if len(r) != len(ranks[0]) {
				t.Fatalf("ranks with %d and %d collectives", len(ranks[0]), len(r))
			}
			latest, earliest = max(latest, r[i].StartNs), min(earliest, r[i].EndNs)
		}
		if latest < earliest {
			n++
		}
	}
	return n
}
