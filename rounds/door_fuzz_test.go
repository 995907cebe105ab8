package rounds

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
	"google.golang.org/protobuf/proto"
)

// fieldReader reads FuzzMasterReports' field values from its bytes, big
// endian, zeros once they run out.
type fieldReader struct{ b []byte }

func (r *fieldReader) u64() uint64 {
	var buf [8]byte
	n := copy(buf[:], r.b)
	r.b = r.b[n:]
	return binary.BigEndian.Uint64(buf[:])
}

func (r *fieldReader) i64() int64 { return int64(r.u64()) }
func (r *fieldReader) i32() int32 { return int32(r.u64() >> 32) }
func (r *fieldReader) byte() byte { return byte(r.u64() >> 56) }

// f64 is a float64: its bits as they come, or (low bit of a flag byte)
// a small value around an honest one, so that the fuzzer reaches values
// near the bounds as well as NaNs and infinities.
func (r *fieldReader) f64(honest float64) float64 {
	if r.byte()&1 == 0 {
		return math.Float64frombits(r.u64())
	}
	return honest * float64(r.i32()) / (1 << 20)
}

// fuzzReport is node 1's report of round 1 built from b: its window, its
// node-wide uncertainty and up to four edges, each with every field.
func fuzzReport(b []byte) *syncpb.NodeWindowData {
	r := &fieldReader{b}
	d := &syncpb.NodeWindowData{NodeId: 1, RoundId: 1, WindowId: 1, WindowStartNs: 0, WindowEndNs: 1e9}
	if r.byte()&1 != 0 {
		d.WindowStartNs, d.WindowEndNs = r.i64(), r.i64()
	}
	d.MissSigmaNs = r.f64(0)
	for range int(r.byte()) % 5 {
		dst := int32(r.byte()) % 5 // 4: no node
		e := honestEdge(1, dst%4)
		e.DstNodeId = dst
		e.SrcNodeId += int32(r.byte()) % 3 // mostly 1, sometimes another
		e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma = r.f64(1e-3), r.f64(e.Beta+1e16), r.f64(2), r.f64(1e-9)
		e.AsymSigmaNs, e.MissSigmaNs, e.MarginNs = r.f64(1), r.f64(1), r.f64(10)
		e.PairsCount, e.LostCount, e.PurePairs, e.SentPairs = r.i32(), r.i32(), r.i32(), r.i32()
		estimators := [...]string{"", "svm", "minfilter", "bogus"}
		e.Estimator = estimators[r.byte()%byte(len(estimators))]
		flags := r.byte()
		e.Insufficient, e.StepDetected = flags&1 != 0, flags&2 != 0
		for range int(flags>>2) % 3 {
			st := &syncpb.EdgeStep{AtNs: r.i64(), AfterNs: r.i64(), SizeNs: r.f64(1e6)}
			if r.byte()&1 != 0 {
				st.Before = &syncpb.EdgeFit{Alpha: r.f64(1e-3), Beta: r.f64(e.Beta), SigmaNs: r.f64(2), AlphaSigma: r.f64(1e-9),
					PairsCount: r.i32(), AsymSigmaNs: r.f64(1), MissSigmaNs: r.f64(1)}
			}
			e.Steps = append(e.Steps, st)
		}
		d.Edges = append(d.Edges, e)
	}
	return d
}

// FuzzMasterReports (issue 30): a master and three honest nodes (round 1
// on hostileGraph, every report of nodes 0, 2 and 3 honest) and node 1,
// which sends one arbitrary message on its stream: arbitrary bytes
// through the wire decoder (raw), or a well-formed report whose every
// field has an arbitrary value (fields, see fuzzReport). Whatever it
// sends:
//
//   - the round completes and is solved (the honest nodes' edges hold the
//     graph);
//   - the run files' writers take every record of it, and the strict
//     readers read them back (checkWritable): nothing the door let in
//     can fail a writer;
//   - the round is the one the honest reports make with node 1's report
//     as the round records it (the edges of node 1 that rounds.jsonl
//     shows, or none when node 1 is missing): what the door dropped
//     changed nothing.
func FuzzMasterReports(f *testing.F) {
	frame := func(d *syncpb.NodeWindowData) []byte {
		b, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: d}}, 0)
		if err != nil {
			panic(err)
		}
		return b
	}
	honest := honestReports()[1].d
	negative := proto.Clone(honest).(*syncpb.NodeWindowData)
	negative.Edges[0].PairsCount = -5 // the finding
	f.Add(false, frame(honest), []byte(nil))
	f.Add(false, frame(negative), []byte(nil))
	f.Add(false, []byte{0, 0, 0, 3, 1, 2, 3}, []byte(nil))
	fields := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.BigEndian.AppendUint64(b, v)
		}
		return b
	}
	one := uint64(1) << 56 // a byte of 1
	f.Add(true, []byte(nil), fields())
	f.Add(true, []byte(nil), fields(one, uint64(math.MaxInt64-1e9), math.MaxInt64, 0, 0, 2*one))
	f.Add(true, []byte(nil), fields(0, one, 0, 2*one, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		uint64(0xfffffffb)<<32))
	f.Fuzz(func(t *testing.T, structured bool, raw, fieldBytes []byte) {
		msg := raw
		var sent *syncpb.NodeWindowData
		if structured {
			sent = fuzzReport(fieldBytes)
			b, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: sent}}, 0)
			if err != nil {
				t.Skip("the report does not marshal:", err)
			}
			msg = b
		} else if env, err := wire.Unmarshal(raw, 0); err == nil {
			if w, ok := env.Body.(*syncpb.Envelope_Window); ok {
				sent = w.Window
			}
		}
		run := newFuzzRound(t)
		s := &echoStream{from: world.Addr{Node: 1, Port: 40000}}
		c := masterConn{run.m}
		run.m.attachStream(1, nil)
		c.OnOpen(s)
		c.OnMessage(s, frameHello(t))
		c.OnMessage(s, msg)
		for _, h := range honestReports() {
			if h.from != 1 {
				run.m.report(h.from, h.d, 0)
			}
		}
		got := run.finish(t)
		if got.Summary == nil {
			t.Fatalf("round unsolved: %v", got.Err)
		}
		checkWritable(t, got)

		// node 1's report as the round recorded it.
		var clean *syncpb.NodeWindowData
		if sent != nil && !slices.Contains(got.Missing, 1) {
			recorded := map[string]bool{}
			for _, e := range got.Edges {
				if e.Src == 1 {
					e.Residual, e.Rejected = nil, false
					recorded[fmt.Sprint(e)] = true
				}
			}
			clean = proto.Clone(sent).(*syncpb.NodeWindowData)
			clean.Edges = nil
			for _, e := range sent.Edges {
				if k := fmt.Sprint(edgeRecord(1, sent, e)); recorded[k] {
					clean.Edges = append(clean.Edges, e)
					delete(recorded, k)
				}
			}
			if len(recorded) > 0 {
				t.Fatalf("rounds.jsonl records edges of node 1 it did not send: %v", recorded)
			}
		}
		base := newFuzzRound(t)
		base.deliver(t, 1, clean)
		want := base.finish(t)
		if g, w := fmt.Sprint(got.Summary.Nodes), fmt.Sprint(want.Summary.Nodes); g != w {
			t.Errorf("models:\n got %s\nfrom what the round recorded of node 1's report:\n     %s", g, w)
		}
		if g, w := fmt.Sprint(got.Offsets), fmt.Sprint(want.Offsets); g != w {
			t.Errorf("offsets:\n got %s\nfrom what the round recorded of node 1's report:\n     %s", g, w)
		}
	})
}

// frameHello is node 1's hello as a wire frame.
func frameHello(t *testing.T) []byte {
	t.Helper()
	b, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 1, Incarnation: 1}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
