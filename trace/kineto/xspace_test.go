package kineto

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// exactNs converts a JSON number of µs to ns, rounded to the nearest, halves
// away from zero, with big.Rat (0 when absent): an oracle independent of parseDecimal.
func exactNs(t *testing.T, n json.Number) int64 {
	if n == "" {
		return 0 // absent
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	neg := r.Sign() < 0
	r.Abs(r)
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if neg {
		q.Neg(q)
	}
	return q.Int64()
}

// converted is one XEvent of a converted trace, on Unix time.
type converted struct {
	name           string
	startNs, durNs int64
}

// TestToXSpaceRealTraces converts the real PyTorch traces: every event
// other than a metadata event is one XEvent and every metadata event is in
// the host plane's kineto_metadata_events (counted both ways); every
// event's start and duration read back exactly, to the ns, against the
// file's decimal text; collective kernels carry hlo_op.
func TestToXSpaceRealTraces(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(realdata, "*.json.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no *.json.gz in %s: %v", realdata, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := ReadWith(path, DecodeOptions{Raw: true})
			if err != nil {
				t.Fatal(err)
			}
			space, err := ToXSpace(tr)
			if err != nil {
				t.Fatal(err)
			}
			// The file's own numbers, for the oracle.
			var doc struct {
				TraceEvents []struct {
					Ph, Name string
					Ts, Dur  json.Number
				} `json:"traceEvents"`
			}
			dec := json.NewDecoder(bytes.NewReader(gunzip(t, mustRead(t, path))))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			var want []converted
			nMeta := 0
			for _, e := range doc.TraceEvents {
				if e.Ph == "M" {
					nMeta++
					continue
				}
				want = append(want, converted{name: e.Name, startNs: tr.BaseTimeNs + exactNs(t, e.Ts), durNs: exactNs(t, e.Dur)})
			}
			var got []converted
			collectives, metaEvents := 0, -1
			for _, p := range space.Planes {
				base, ok := xspace.TimeBase(p)
				if !ok || base != tr.TimeBase() {
					t.Errorf("plane %s: time base %d, %v; want %d", p.Name, base, ok, tr.TimeBase())
				}
				if st, ok := xspace.StatByName(p, p.Stats, StatMetadataEvents); ok {
					var arr []json.RawMessage
					if err := json.Unmarshal([]byte(xspace.StatString(p, st)), &arr); err != nil {
						t.Fatal(err)
					}
					metaEvents = len(arr)
				}
				for _, l := range p.Lines {
					for _, ev := range l.Events {
						got = append(got, converted{name: p.EventMetadata[ev.MetadataId].GetName(),
							startNs: base + xspace.StartPs(l, ev)/1000, durNs: ev.DurationPs / 1000})
						if xspace.StartPs(l, ev)%1000 != 0 || ev.DurationPs%1000 != 0 {
							t.Errorf("event %s: times not whole ns", p.EventMetadata[ev.MetadataId].GetName())
						}
						if _, ok := xspace.StatByName(p, ev.Stats, StatHloOp); ok {
							collectives++
							if !strings.HasPrefix(p.Name, "/device:GPU:") {
								t.Errorf("collective on plane %s", p.Name)
							}
						}
					}
				}
			}
			if metaEvents < 0 {
				metaEvents = 0
			}
			t.Logf("%d events: %d XEvents + %d metadata events; %d planes; %d collectives", len(doc.TraceEvents), len(got), metaEvents, len(space.Planes), collectives)
			if len(got)+metaEvents != len(doc.TraceEvents) || len(got) != len(want) || metaEvents != nMeta {
				t.Errorf("%d XEvents and %d metadata events, want %d and %d (of %d)", len(got), metaEvents, len(want), nMeta, len(doc.TraceEvents))
			}
			key := func(a, b converted) int {
				return cmp.Or(cmp.Compare(a.startNs, b.startNs), cmp.Compare(a.durNs, b.durNs), strings.Compare(a.name, b.name))
			}
			slices.SortFunc(got, key)
			slices.SortFunc(want, key)
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("event %d: got %+v, want %+v", i, got[i], want[i])
					}
				}
			}
			if n := len(Collectives(tr)); collectives != n {
				t.Errorf("%d events with hlo_op, want the %d collective kernels", collectives, n)
			}
		})
	}
}

// TestToXSpaceEvent checks one kernel's plane, line, stats and kinds.
func TestToXSpaceEvent(t *testing.T) {
	const trace = `{"distributedInfo": {"rank": 3, "world_size": 4, "backend": "nccl"}, "baseTimeNanoseconds": 1700000000000000000,
	"traceEvents": [
	 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 1, "tid": 7, "ts": 2.0005, "dur": 1.25,
	  "args": {"External id": 12, "device": 1, "stream": 7, "correlation": 99, "big": 18446744073709551615, "occ": 0.5, "ok": true, "grid": [1, 2], "nil": null, "hlo_op": "x"}},
	 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 1, "dur": 3},
	 {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "bp": "e", "pid": 10, "tid": 11, "ts": 1.5},
	 {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": "main"}},
	 {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "GPU 1"}}
	]}`
	tr, err := DecodeWith(strings.NewReader(trace), "t.json", DecodeOptions{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	space, err := ToXSpace(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(space.Planes) != 2 || space.Planes[0].Name != "/host:CPU" || space.Planes[1].Name != "/device:GPU:1" {
		t.Fatalf("planes %v", planeNames(space))
	}
	host, gpu := space.Planes[0], space.Planes[1]
	if base, _ := xspace.TimeBase(gpu); base != 1700000000000000000 {
		t.Errorf("time base %d", base)
	}
	if l := host.Lines[0]; l.Id != 11 || l.Name != "main" || len(l.Events) != 2 || l.TimestampNs != 1000 {
		t.Errorf("host line %d %q ts %d with %d events", l.Id, l.Name, l.TimestampNs, len(l.Events))
	}
	l := gpu.Lines[0]
	ev := l.Events[0]
	if l.Id != 7 || l.Name != "stream 7" || xspace.StartPs(l, ev) != 2001_000 || ev.DurationPs != 1250_000 {
		t.Errorf("kernel on line %d %q at %d ps for %d ps", l.Id, l.Name, xspace.StartPs(l, ev), ev.DurationPs)
	}
	var got []string
	for _, st := range ev.Stats {
		got = append(got, fmt.Sprintf("%s=%T:%s", gpu.StatMetadata[st.MetadataId].Name, st.Value, xspace.StatString(gpu, st)))
	}
	want := []string{
		"External id=*xplanepb.XStat_Int64Value:12", "device=*xplanepb.XStat_Int64Value:1",
		"stream=*xplanepb.XStat_Int64Value:7", "correlation=*xplanepb.XStat_Int64Value:99",
		"big=*xplanepb.XStat_Uint64Value:18446744073709551615", "occ=*xplanepb.XStat_DoubleValue:0.5",
		"ok=*xplanepb.XStat_Int64Value:1", "grid=*xplanepb.XStat_StrValue:[1,2]", "nil=<nil>:",
		"args.hlo_op=*xplanepb.XStat_StrValue:x", "hlo_op=*xplanepb.XStat_StrValue:ncclKernel_AllReduce",
	}
	if !slices.Equal(got, want) {
		t.Errorf("kernel stats\n got %q\nwant %q", got, want)
	}
	if cat, _ := xspace.StatByName(gpu, gpu.EventMetadata[ev.MetadataId].Stats, StatCategory); xspace.StatString(gpu, cat) != "kernel" {
		t.Errorf("kernel metadata has no cat")
	}
	flow := host.Lines[0].Events[1]
	got = got[:0]
	for _, st := range flow.Stats {
		got = append(got, host.StatMetadata[st.MetadataId].Name+"="+xspace.StatString(host, st))
	}
	if want := []string{"ph=s", "id=5", "bp=e"}; !slices.Equal(got, want) {
		t.Errorf("flow stats %q, want %q", got, want)
	}
	for _, name := range []string{"rank", "world_size", "backend", StatMetadataEvents} {
		if _, ok := xspace.StatByName(host, host.Stats, name); !ok {
			t.Errorf("host plane has no %s stat", name)
		}
	}
}

// TestToXSpaceRange: an event too far from the others is an error naming
// the trace and the event.
func TestToXSpaceRange(t *testing.T) {
	const trace = `[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1682725898082228, "dur": 1},
	{"ph": "X", "name": "late", "pid": 1, "tid": 1, "ts": 1782725898082228, "dur": 1}]`
	tr, err := Decode(strings.NewReader(trace), "far.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ToXSpace(tr)
	if err == nil || !strings.Contains(err.Error(), "far.json") || !strings.Contains(err.Error(), `"late"`) {
		t.Errorf("got %v, want an error naming far.json and the event", err)
	}
}

func planeNames(s *xplanepb.XSpace) []string {
	var n []string
	for _, p := range s.Planes {
		n = append(n, p.Name)
	}
	return n
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
