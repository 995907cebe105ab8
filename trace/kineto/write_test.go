package kineto

import (
	"bytes"
	"strings"
	"testing"
)

// TestMarshalReadsBack: a written trace reads back with Decode: its job,
// its base time (the earliest ts rounded down to the second, negative
// times included) and every event's times to the ns.
func TestMarshalReadsBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ts       int64 // the first event's time
		wantBase int64
	}{
		{"positive", 20e9 + 5, 20e9},
		{"negative", -1, -1e9},
		{"whole second", 3e9, 3e9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := Metadata(1000, 2, tc.ts)
			k := WriteEvent{Ph: "X", Cat: "kernel", Name: "void f<float>", Tid: 1, Ts: tc.ts + 1500, Dur: 2001}
			k.Add(IntArg("External id", 7), StrArg("dtype", "Float"))
			evs = append(evs, k, WriteEvent{Ph: "f", Cat: "ac2g", Name: "ac2g", Tid: 1, Ts: k.Ts, Flow: 7})
			text := Marshal(Header{Name: "node1.pt.trace.json.gz", Rank: 1, WorldSize: 4}, evs)
			if !bytes.Contains(text, []byte(`"name": "void f<float>"`)) {
				t.Errorf("kernel name escaped:\n%s", text)
			}
			tr, err := Decode(bytes.NewReader(text), "t")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Rank != 1 || tr.WorldSize != 4 || tr.BaseTimeNs != tc.wantBase {
				t.Fatalf("rank %d, world %d, base %d; want 1, 4, %d", tr.Rank, tr.WorldSize, tr.BaseTimeNs, tc.wantBase)
			}
			var found bool
			for _, e := range tr.Events {
				if e.Ph == "X" {
					found = true
					if got := tr.UnixNs(e.TsNs); got != k.Ts || e.DurNs != k.Dur {
						t.Errorf("kernel at %d for %d ns; want %d for %d", got, e.DurNs, k.Ts, k.Dur)
					}
				}
			}
			if !found {
				t.Fatal("no kernel read back")
			}
			if strings.Count(string(text), `"ph": "M"`) != 8+2*2 {
				t.Errorf("want 12 metadata events:\n%s", text)
			}
		})
	}
}
