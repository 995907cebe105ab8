package kineto

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestRetimeWith: event times are rewritten, top-level members are replaced
// where the trace has them and added where it does not, and every other
// byte is kept.
func TestRetimeWith(t *testing.T) {
	tests := []struct {
		name, src string
		top       []Member
		want      string
	}{
		{
			name: "times only",
			src:  `{"traceEvents": [{"ph": "X", "ts": 1.5, "dur": 2, "name": "a"}], "baseTimeNanoseconds": 7}`,
			want: `{"traceEvents": [{"ph": "X", "ts": 10, "dur": 0.001, "name": "a"}], "baseTimeNanoseconds": 7}`,
		},
		{
			name: "base replaced",
			src:  `{"traceName": "x", "traceEvents": [{"ph": "i", "name": "n", "ts": 1}], "baseTimeNanoseconds": 9000000000}`,
			top:  []Member{BaseMember(8e9)},
			want: `{"traceName": "x", "traceEvents": [{"ph": "i", "name": "n", "ts": 10}], "baseTimeNanoseconds": 8000000000}`,
		},
		{
			name: "base and rank added after the last member",
			src:  "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"n\", \"ts\": 1}],\n \"x\": {\"y\": 1}\n}\n",
			top:  []Member{BaseMember(5), {Key: "distributedInfo", Value: []byte(`{"rank": 3}`)}},
			want: "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"n\", \"ts\": 10}],\n \"x\": {\"y\": 1}, \"baseTimeNanoseconds\": 5, \"distributedInfo\": {\"rank\": 3}\n}\n",
		},
		{
			name: "one replaced, one added",
			src:  `{"traceEvents": [], "baseTimeNanoseconds": 2}`,
			top:  []Member{{Key: "distributedInfo", Value: []byte(`{"rank": 0}`)}, BaseMember(3)},
			want: `{"traceEvents": [], "baseTimeNanoseconds": 3, "distributedInfo": {"rank": 0}}`,
		},
		{
			name: "bare array",
			src:  `[{"ph": "i", "name": "n", "ts": 1}]` + "\n",
			top:  []Member{BaseMember(4)},
			want: `{"traceEvents": [{"ph": "i", "name": "n", "ts": 10}], "baseTimeNanoseconds": 4}` + "\n",
		},
		{
			name: "bare array, nothing after it",
			src:  `[{"ph": "i", "name": "n", "ts": 1}]`,
			top:  []Member{BaseMember(4)},
			want: `{"traceEvents": [{"ph": "i", "name": "n", "ts": 10}], "baseTimeNanoseconds": 4}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Decode(strings.NewReader(tc.src), "t")
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			fn := func(int, *Event) (int64, int64) { return 10e3, 1 }
			if err := RetimeWith([]byte(tc.src), tr, &b, fn, RetimeOptions{Top: tc.top}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
			back, err := Decode(bytes.NewReader(b.Bytes()), "back")
			if err != nil {
				t.Fatalf("our reader cannot read it back: %v", err)
			}
			for _, m := range tc.top {
				if m.Key == "baseTimeNanoseconds" && string(BaseMember(back.BaseTimeNs).Value) != string(m.Value) {
					t.Errorf("base read back %d, want %s", back.BaseTimeNs, m.Value)
				}
			}
		})
	}
	tr, err := Decode(strings.NewReader(`{"traceEvents": []}`), "t")
	if err != nil {
		t.Fatal(err)
	}
	err = RetimeWith([]byte(`{"traceEvents": []}`), tr, &bytes.Buffer{}, nil, RetimeOptions{Top: []Member{BaseMember(1), BaseMember(2)}})
	if err == nil || !strings.Contains(err.Error(), "set twice") {
		t.Errorf("a key set twice: %v", err)
	}
}

// TestScanTimes: the base and the starts of the events other than
// metadata, as Decode reads them; text that is not a trace is an error.
func TestScanTimes(t *testing.T) {
	tests := []struct {
		name, src string
		want      Times
		err       bool
	}{
		{"object", `{"traceEvents": [{"ph": "M", "name": "m", "ts": 5}, {"ph": "X", "name": "a", "ts": 1.0005, "dur": 1}, {"name": "b", "ph": "i", "ts": -2}], "baseTimeNanoseconds": 9000000000}`,
			Times{BaseTimeNs: 9e9, Starts: []int64{1001, -2000}}, false},
		{"no base", `{"traceEvents": [{"ph": "X", "name": "a", "ts": 3, "dur": 1}]}`, Times{Starts: []int64{3000}}, false},
		{"bare array", `[{"ph": "X", "name": "a", "ts": 3, "dur": 1}]`, Times{Starts: []int64{3000}}, false},
		{"truncated", `{"traceEvents": [{"ph": "X", "name": "a", "ts": 3`, Times{}, true},
		{"no events", `{"baseTimeNanoseconds": 1}`, Times{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScanTimes([]byte(tc.src))
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if got.BaseTimeNs != tc.want.BaseTimeNs || !slices.Equal(got.Starts, tc.want.Starts) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			tr, err := Decode(strings.NewReader(tc.src), "t")
			if err != nil {
				t.Fatal(err)
			}
			var starts []int64
			for _, e := range tr.Events {
				if e.Ph != "M" {
					starts = append(starts, e.TsNs)
				}
			}
			if tr.BaseTimeNs != got.BaseTimeNs || !slices.Equal(starts, got.Starts) {
				t.Errorf("Decode reads base %d starts %v", tr.BaseTimeNs, starts)
			}
		})
	}
}
