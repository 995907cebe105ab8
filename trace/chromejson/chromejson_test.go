package chromejson

import (
	"encoding/json"
	"math"
	"testing"
)

// TestAppendMicros pins the three layouts of a time, for both units: the
// digits are exact for every int64, MinInt64 included.
func TestAppendMicros(t *testing.T) {
	for _, tt := range []struct {
		t    int64
		unit Unit
		dec  Decimals
		want string
	}{
		{0, Picoseconds, Trim, "0"},
		{1, Picoseconds, Trim, "0.000001"},
		{10, Picoseconds, Trim, "0.00001"},
		{999_999, Picoseconds, Trim, "0.999999"},
		{1_000_000, Picoseconds, Trim, "1"},
		{1_500_000, Picoseconds, Trim, "1.5"},
		{123_456_789_012, Picoseconds, Trim, "123456.789012"},
		{-1, Picoseconds, Trim, "-0.000001"},
		{-1_500_000, Picoseconds, Trim, "-1.5"},
		{math.MinInt64, Picoseconds, Trim, "-9223372036854.775808"},
		{1_500_000, Picoseconds, Fixed, "1.500000"},
		{2_000_000, Picoseconds, FixedOrWhole, "2"},

		{0, Nanoseconds, Fixed, "0.000"},
		{1, Nanoseconds, Fixed, "0.001"},
		{1234567, Nanoseconds, Fixed, "1234.567"},
		{20e9 + 5, Nanoseconds, Fixed, "20000000.005"},
		{-1, Nanoseconds, Fixed, "-0.001"},
		{-1500, Nanoseconds, Fixed, "-1.500"},
		{math.MinInt64, Nanoseconds, Fixed, "-9223372036854775.808"},

		{0, Nanoseconds, FixedOrWhole, "0"},
		{2000, Nanoseconds, FixedOrWhole, "2"},
		{1500, Nanoseconds, FixedOrWhole, "1.500"},
		{-1500, Nanoseconds, FixedOrWhole, "-1.500"},
		{-1, Nanoseconds, FixedOrWhole, "-0.001"},

		{1500, Nanoseconds, Trim, "1.5"},
		{1050, Nanoseconds, Trim, "1.05"},
		{-2000, Nanoseconds, Trim, "-2"},
	} {
		if got := string(AppendMicros([]byte("x"), tt.t, tt.unit, tt.dec)); got != "x"+tt.want {
			t.Errorf("AppendMicros(%d, %d, %d) = %q, want %q", tt.t, tt.unit, tt.dec, got, "x"+tt.want)
		}
	}
}

// TestTrimIsFloat: for times float64 holds exactly to the ns (under a
// day in µs), Trim writes what encoding/json writes of the float µs, the
// text a float-based writer gave them.
func TestTrimIsFloat(t *testing.T) {
	for _, ns := range []int64{0, 1, 999, 1000, 1001, 123456789, 86_399_999_999_999, -5, -1_000_500} {
		want, err := json.Marshal(float64(ns) / 1e3)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendMicros(nil, ns, Nanoseconds, Trim)); got != string(want) {
			t.Errorf("AppendMicros(%d ns) = %s; encoding/json writes %s", ns, got, want)
		}
	}
}

// TestAppendString: JSON strings as Chrome and Kineto write them, no HTML
// escaping, invalid UTF-8 replaced; the same for string and []byte.
func TestAppendString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", `""`},
		{"ncclKernel_AllReduce(ncclDevComm*)", `"ncclKernel_AllReduce(ncclDevComm*)"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\tnl\n\x01", `"tab\u0009nl\u000a\u0001"`},
		{"void f<float>&", `"void f<float>&"`},
		{"µs €", `"µs €"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
	} {
		if got := string(AppendString(nil, tt.in)); got != tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := string(AppendString(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("AppendString([]byte %q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestAppendFloat: shortest exact numbers; NaN and ±Inf as strings.
func TestAppendFloat(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1.5, "1.5"}, {0.1, "0.1"}, {1e21, "1e+21"}, {-2, "-2"},
		{math.NaN(), `"NaN"`}, {math.Inf(1), `"+Inf"`}, {math.Inf(-1), `"-Inf"`},
	} {
		if got := string(AppendFloat(nil, tt.f)); got != tt.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

// TestAppendEvent: an event is the object encoding/json makes of the
// struct with the same members (omitempty where AppendEvent leaves them
// out), its times the exact µs.
func TestAppendEvent(t *testing.T) {
	type jsonEvent struct {
		Name string          `json:"name"`
		Cat  string          `json:"cat,omitempty"`
		Ph   string          `json:"ph"`
		Ts   float64         `json:"ts"`
		Dur  *float64        `json:"dur,omitempty"`
		Pid  int64           `json:"pid"`
		Tid  int64           `json:"tid"`
		ID   string          `json:"id,omitempty"`
		S    string          `json:"s,omitempty"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	for _, e := range []Event{
		{Name: "iteration", Cat: "iteration", Ph: "X", Ts: 1_234_567, Dur: 1500, HasDur: true, Pid: 3, Args: []byte(`{"iter":7}`)},
		{Name: "run_config", Cat: "metadata", Ph: "i", S: "g", Ts: 0, Pid: 0},
		{Name: "comm_window", Cat: "comm", Ph: "b", Ts: -2500, Pid: 1, ID: "1.7"},
		{Name: "thread_name", Ph: "M", Pid: 1, Tid: 2, Dur: 0, HasDur: true, Args: []byte(`{"name":"omp thread 1"}`)},
	} {
		j := jsonEvent{Name: e.Name, Cat: e.Cat, Ph: e.Ph, Ts: float64(e.Ts) / 1e3, Pid: e.Pid, Tid: e.Tid, ID: e.ID, S: e.S, Args: e.Args}
		if e.HasDur {
			d := float64(e.Dur) / 1e3
			j.Dur = &d
		}
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendEvent(nil, &e, Nanoseconds); string(got) != string(want) {
			t.Errorf("AppendEvent = %s\nencoding/json: %s", got, want)
		}
	}
}
