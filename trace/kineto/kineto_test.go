package kineto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// realdata is the directory of the project's real traces.
const realdata = "../../testdata/realdata"

func TestReadRealTraces(t *testing.T) {
	want := map[string]struct {
		events, collectives, rank, worldSize int
		backend                              string
		baseTimeNs                           int64
	}{
		"sampled_rank-0.json.gz":                     {4855, 10, 0, 128, "nccl", 0},
		"sampled_rank-1.json.gz":                     {4720, 10, 1, 128, "nccl", 0},
		"mi250_minitoy_train_ROCm6_2_kineto.json.gz": {220, 0, -1, 0, "", 1735632360000000000},
	}
	paths, err := filepath.Glob(filepath.Join(realdata, "*.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no *.json.gz in %s", realdata)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			ks := Collectives(tr)
			kinds := map[string]int{}
			for _, e := range tr.Events {
				kinds[e.Ph+" "+e.Cat]++
			}
			t.Logf("%s: rank %d of %d (%q), %d events, %d collective kernels; by ph and cat: %v",
				tr.Name, tr.Rank, tr.WorldSize, tr.Backend, len(tr.Events), len(ks), kinds)
			names := map[string]int{}
			for _, k := range ks {
				names[k.Name]++
			}
			for name, n := range names {
				t.Logf("  %d × %s", n, name)
			}
			w, ok := want[filepath.Base(path)]
			if !ok {
				return // a new file: reading it is the test
			}
			got := [...]int{len(tr.Events), len(ks), tr.Rank, tr.WorldSize}
			if got != [...]int{w.events, w.collectives, w.rank, w.worldSize} || tr.Backend != w.backend || tr.BaseTimeNs != w.baseTimeNs {
				t.Errorf("events, collectives, rank, world size = %v, backend %q, base %d; want %v, %q, %d",
					got, tr.Backend, tr.BaseTimeNs, [...]int{w.events, w.collectives, w.rank, w.worldSize}, w.backend, w.baseTimeNs)
			}
			for i := 1; i < len(ks); i++ {
				if ks[i].StartNs < ks[i-1].StartNs {
					t.Errorf("collectives out of order at %d", i)
				}
			}
		})
	}
}

func TestRealTraceEvent(t *testing.T) {
	tr, err := Read(filepath.Join(realdata, "sampled_rank-0.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ks := Collectives(tr)
	// The first NCCL kernel in time of rank 0, as in the file:
	// "pid": 0, "tid": 84, "ts": 1682725898094377, "dur": 30669.0.
	k := ks[0]
	want := Kernel{
		Name:    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
		StartNs: 1682725898094377000, EndNs: 1682725898125046000, Device: "0", Stream: "84",
	}
	if k.Name != want.Name || k.StartNs != want.StartNs || k.EndNs != want.EndNs || k.Device != want.Device || k.Stream != want.Stream {
		t.Errorf("first kernel = %+v, want %+v", k, want)
	}
	for key, v := range map[string]string{"stream": "84", "blocks per SM": "0.14814815", "grid": "[16,1,1]", "correlation": "6937369"} {
		if k.Args[key] != v {
			t.Errorf("args[%q] = %q, want %q", key, k.Args[key], v)
		}
	}
	if e := tr.Events[k.Index]; e.Name != k.Name || e.TsNs != k.StartNs {
		t.Errorf("Index %d names %+v", k.Index, e)
	}
}

func TestDecode(t *testing.T) {
	cases := []struct {
		name, in string
		want     *Trace
	}{
		{"top-level object",
			`{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}],
			  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_count": 2},
			  "traceEvents": [
			    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1682725898094377, "dur": 30669.0,
			     "args": {"stream": 7, "s": "x\"y", "grid": [16, 1, 1], "o": {"a": [1, 2]}, "b": true, "n": null, "f": 0.14814815}},
			    {"ph": "M", "name": "process_name", "pid": "Spans", "tid": 0, "ts": 5, "args": {"name": "GPU 0"}}
			  ],
			  "baseTimeNanoseconds": 1735632360000000000, "traceName": "x"}`,
			&Trace{Rank: 3, WorldSize: 8, Backend: "nccl", BaseTimeNs: 1735632360000000000, Events: []Event{
				{Ph: "X", Cat: "kernel", Name: "k", Pid: "0", Tid: "7", TsNs: 1682725898094377000, DurNs: 30669000,
					Args: map[string]string{"stream": "7", "s": `x"y`, "grid": "[16,1,1]", "o": `{"a":[1,2]}`, "b": "true", "n": "null", "f": "0.14814815"}},
				{Ph: "M", Name: "process_name", Pid: "Spans", Tid: "0", TsNs: 5000, Args: map[string]string{"name": "GPU 0"}},
			}}},
		{"ts as a string",
			`{"traceEvents": [{"ph": "X", "name": "a", "ts": "1682725898236567.123", "dur": "2.5"}]}`,
			&Trace{Rank: -1, Events: []Event{{Ph: "X", Name: "a", TsNs: 1682725898236567123, DurNs: 2500}}}},
		{"fractions beyond float64",
			// float64 holds about 16 digits: 4203669603018.7561 µs would lose its last ns.
			`{"traceEvents": [{"ph": "E", "ts": 4203669603018.7561, "dur": 9761.8785}]}`,
			&Trace{Rank: -1, Events: []Event{{Ph: "E", TsNs: 4203669603018756, DurNs: 9761879}}}},
		{"rounding to the nearest ns",
			`{"traceEvents": [{"ph": "E", "ts": 0.0005, "dur": 0.00049}, {"ph": "E", "ts": -0.0005, "dur": 1e-3}, {"ph": "E", "ts": 1.5E3, "dur": 0.0015}]}`,
			&Trace{Rank: -1, Events: []Event{{Ph: "E", TsNs: 1, DurNs: 0}, {Ph: "E", TsNs: -1, DurNs: 1}, {Ph: "E", TsNs: 1500000, DurNs: 2}}}},
		{"null is absent",
			`{"traceEvents": [{"ph": "M", "name": "n", "cat": null, "ts": null, "dur": null, "args": null, "pid": null}], "distributedInfo": null}`,
			&Trace{Rank: -1, Events: []Event{{Ph: "M", Name: "n"}}}},
		{"unknown keys and flow events",
			`{"traceEvents": [{"ph": "f", "id": 1, "pid": 1, "tid": 2, "ts": 4.5, "cat": "ac2g", "name": "ac2g", "bp": "e", "extra": {"a": [1, {"b": 2}]}},
			  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 7}]}`,
			&Trace{Rank: -1, Events: []Event{
				{Ph: "f", Cat: "ac2g", Name: "ac2g", Pid: "1", Tid: "2", TsNs: 4500},
				{Ph: "i", Name: "Record Window End", TsNs: 7000},
			}}},
		{"bare array",
			`[{"ph": "X", "name": "a", "ts": 1, "dur": 2}]`,
			&Trace{Rank: -1, Events: []Event{{Ph: "X", Name: "a", TsNs: 1000, DurNs: 2000}}}},
		{"escapes",
			`{"traceEvents": [{"ph": "M", "name": "a\u00e9\n", "cat": "\ud83d\ude00", "pid": "p\"q", "args": {"k\u00e9": "\u00e9"}}]}`,
			&Trace{Rank: -1, Events: []Event{{Ph: "M", Name: "aé\n", Cat: "😀", Pid: `p"q`, Args: map[string]string{"ké": "é"}}}}},
		{"escaped keys",
			`{"traceEvents": [{"\u0074s": 2, "\u0070h": "i", "name": "b", "args": {"k": 1, "\u006b2": "v"}}]}`,
			&Trace{Rank: -1, Events: []Event{{Ph: "i", Name: "b", TsNs: 2000, Args: map[string]string{"k": "1", "k2": "v"}}}}},
		{"whitespace everywhere",
			"\n\t{ \"traceEvents\" :\r\n [ { \"ph\" : \"M\" , \"name\" : \"m\" , \"args\" : { \"a\" : [ 1 , 2 ] } } ] } \n",
			&Trace{Rank: -1, Events: []Event{{Ph: "M", Name: "m", Args: map[string]string{"a": "[1,2]"}}}}},
		{"empty",
			`{"traceEvents": []}`,
			&Trace{Rank: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, gz := range []bool{false, true} {
				in := []byte(tc.in)
				if gz {
					in = gzipped(t, in)
				}
				got, err := Decode(bytes.NewReader(in), "x.json")
				if err != nil {
					t.Fatalf("gzip %v: %v", gz, err)
				}
				tc.want.Name = "x.json"
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("gzip %v:\n got %+v\nwant %+v", gz, got, tc.want)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	// 17 good events, then a bad one, as in a real file.
	many := `{"traceEvents": [` + strings.Repeat(`{"ph": "X", "name": "a", "ts": 1, "dur": 2}, `, 17) + `{"ph": "X", "ts": "abc"}]}`
	cases := []struct{ name, in, err string }{
		{"ts a string, not a number", many,
			fmt.Sprintf(`read x.json: byte %d: traceEvents[17].ts: want a number, got "abc"`, strings.Index(many, `"abc"`))},
		{"ts a bool", `{"traceEvents": [{"ts": true}]}`,
			`read x.json: byte 24: traceEvents[0].ts: want a number, got true`},
		{"dur an object", `{"traceEvents": [{"dur": {}}]}`,
			`read x.json: byte 25: traceEvents[0].dur: want a number, got an object`},
		{"ts too large", `{"traceEvents": [{"ts": 1e300}]}`,
			`read x.json: byte 24: traceEvents[0].ts: 1e300 µs is out of range (|ts| ≤ 4000000000000000 µs)`},
		{"long value", `{"traceEvents": [{"ts": "` + strings.Repeat("é", 30) + `"}]}`,
			`read x.json: byte 24: traceEvents[0].ts: want a number, got "` + strings.Repeat("é", 19) + `…`},
		{"name a number", `{"traceEvents": [{"name": 5}]}`,
			`read x.json: byte 26: traceEvents[0].name: want a string, got 5`},
		{"pid a fraction", `{"traceEvents": [{"pid": 1.5}]}`,
			`read x.json: byte 25: traceEvents[0].pid: want an integer or a string, got 1.5`},
		{"args an array", `{"traceEvents": [{"args": [1]}]}`,
			`read x.json: byte 26: traceEvents[0].args: want an object, got an array`},
		{"event not an object", `{"traceEvents": [{"ph": "M", "name": "m"}, 7]}`,
			`read x.json: byte 43: traceEvents[1]: want an object, got 7`},
		{"traceEvents not an array", `{"traceEvents": {}}`,
			`read x.json: byte 16: traceEvents: want an array, got an object`},
		{"missing bracket in an event", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 1}, {"ts": 2]}`,
			`read x.json: byte 60: traceEvents[1]: invalid character ']' after object key:value pair`},
		{"missing closing bracket", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 1}}`,
			`read x.json: byte 50: traceEvents: invalid character '}' after array element`},
		{"missing comma", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 1} {"ts": 2}]}`,
			`read x.json: byte 51: traceEvents[1]: expected comma after array element`},
		{"bad literal in args", `{"traceEvents": [{"args": {"a": [1, tru]}}]}`,
			`read x.json: byte 39: traceEvents[0]: invalid character ']' in literal true (expecting 'e')`},
		{"truncated", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 1}, {"ts": 2`,
			`read x.json: byte 60: traceEvents[1]: unexpected end of JSON input`},
		{"truncated after an event", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 1},`,
			`read x.json: byte 51: traceEvents[1]: unexpected end of JSON input`},
		{"truncated inside a string", `{"traceEvents": [{"name": "ab`,
			`read x.json: byte 29: traceEvents[0]: unexpected end of JSON input`},
		{"empty", ``, `read x.json: byte 0: unexpected end of JSON input`},
		{"data after the object", `{"traceEvents": []} {}`,
			`read x.json: byte 20: unexpected data after the top-level value`},
		{"garbage after the object", `{"traceEvents": []}x`,
			`read x.json: byte 19: invalid character 'x' looking for beginning of value`},
		{"not an object", `"traceEvents"`,
			`read x.json: byte 0: want a JSON object or array, got "traceEvents"`},
		{"no traceEvents", `{"schemaVersion": 1}`,
			`read x.json: byte 20: no traceEvents`},
		{"traceEvents twice", `{"traceEvents": [], "traceEvents": []}`,
			`read x.json: byte 20: traceEvents: duplicate key (first at byte 1)`},
		{"rank not an integer", `{"distributedInfo": {"rank": "a"}, "traceEvents": []}`,
			`read x.json: byte 29: distributedInfo.rank: want an integer, got "a"`},
		{"base time a fraction", `{"baseTimeNanoseconds": 1.5, "traceEvents": []}`,
			`read x.json: byte 24: baseTimeNanoseconds: want an integer, got 1.5`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in), "x.json")
			if err == nil {
				t.Fatalf("no error, want %s", tc.err)
			}
			if err.Error() != tc.err {
				t.Errorf("error\n got %s\nwant %s", err, tc.err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Name != "x.json" || e.Decompressed {
				t.Errorf("error %#v is not an *Error for x.json, plain", err)
			}
			// The same text gzipped: the same error, at a decompressed offset.
			_, err = Decode(bytes.NewReader(gzipped(t, []byte(tc.in))), "x.json")
			if wantGz := strings.Replace(tc.err, ": byte ", ": decompressed byte ", 1); err == nil || err.Error() != wantGz {
				t.Errorf("gzipped: error\n got %v\nwant %s", err, wantGz)
			}
		})
	}
}

func TestTruncatedGzip(t *testing.T) {
	path := filepath.Join(realdata, "sampled_rank-0.json.gz")
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Clone(full)
	corrupt[len(corrupt)-8] ^= 0xff // the CRC-32 of the trailer
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"half", full[:len(full)/2], "gzip: unexpected EOF"},
		{"no trailer", full[:len(full)-8], "gzip: unexpected EOF"},
		{"last byte", full[:len(full)-1], "gzip: unexpected EOF"},
		{"header only", full[:5], "gzip: unexpected EOF"},
		{"bad checksum", corrupt, "gzip: invalid checksum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Decode(bytes.NewReader(tc.in), "rank-0.json.gz")
			if err == nil {
				t.Fatalf("no error, %d events", len(tr.Events))
			}
			t.Log(err)
			var e *Error
			if !errors.As(err, &e) || e.Name != "rank-0.json.gz" || !e.Decompressed {
				t.Fatalf("error %#v is not an *Error for rank-0.json.gz, gzipped", err)
			}
			if !strings.HasPrefix(err.Error(), "read rank-0.json.gz: decompressed byte ") || !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("error %q does not name the file, the offset and %q", err, tc.want)
			}
		})
	}
}

func TestGzipByMagic(t *testing.T) {
	plain := []byte(`{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 0}]}`)
	dir := t.TempDir()
	for name, data := range map[string][]byte{"gz-named.json.gz": plain, "plain-named.json": gzipped(t, plain)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Name != path || len(tr.Events) != 1 || tr.Events[0].TsNs != 1000 {
			t.Errorf("%s: %+v", name, tr)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); err == nil || !strings.HasPrefix(err.Error(), "read "+filepath.Join(dir, "missing.json")+": ") {
		t.Errorf("missing file: %v", err)
	}
}

func TestCollectives(t *testing.T) {
	tr := &Trace{Events: []Event{
		{Ph: "X", Cat: "kernel", Name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", Pid: "0", Tid: "7", TsNs: 300, DurNs: 10},
		{Ph: "X", Cat: "cpu_op", Name: "nccl:all_reduce", TsNs: 100, DurNs: 5},          // not a kernel
		{Ph: "X", Cat: "user_annotation", Name: "nccl:all_reduce", TsNs: 100, DurNs: 5}, // not a kernel
		{Ph: "i", Cat: "kernel", Name: "ncclKernel_AllGather", TsNs: 50},                // not complete
		{Ph: "X", Cat: "Kernel", Name: "void rcclGenericKernel<1>(ncclDevComm*)", Pid: "2", Tid: "0", TsNs: 200, DurNs: 50},
		{Ph: "X", Cat: "kernel", Name: "void at::native::elementwise_kernel<128, 2>", TsNs: 10, DurNs: 5},
		{Ph: "X", Cat: "KERNEL", Name: "NCCLKERNEL_SendRecv", Pid: "0", Tid: "9", TsNs: 200, DurNs: 20},
		{Ph: "X", Cat: "kernel", Name: "ncclKernel_SendRecv", Pid: "0", Tid: "8", TsNs: 200, DurNs: 50, Args: map[string]string{"stream": "8"}},
	}}
	got := Collectives(tr)
	want := []Kernel{
		{Name: "NCCLKERNEL_SendRecv", StartNs: 200, EndNs: 220, Device: "0", Stream: "9", Index: 6},
		{Name: "ncclKernel_SendRecv", StartNs: 200, EndNs: 250, Device: "0", Stream: "8", Index: 7, Args: map[string]string{"stream": "8"}},
		{Name: "void rcclGenericKernel<1>(ncclDevComm*)", StartNs: 200, EndNs: 250, Device: "2", Stream: "0", Index: 4},
		{Name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", StartNs: 300, EndNs: 310, Device: "0", Stream: "7", Index: 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Collectives:\n got %+v\nwant %+v", got, want)
	}
	if ks := Collectives(&Trace{}); len(ks) != 0 {
		t.Errorf("empty trace: %v", ks)
	}
}

func TestDecodeFilter(t *testing.T) {
	f, err := os.Open(filepath.Join(realdata, "sampled_rank-1.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := DecodeFilter(f, "rank-1", func(e Event) bool { return e.Cat == "kernel" })
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 1104 || tr.Rank != 1 || len(Collectives(tr)) != 10 {
		t.Errorf("kept %d events (want 1104), rank %d, %d collectives", len(tr.Events), tr.Rank, len(Collectives(tr)))
	}
}

func TestParseDecimal(t *testing.T) {
	cases := []struct {
		in        string
		shift     int
		v         int64
		exact, ok bool
	}{
		{"0", 3, 0, true, true},
		{"-0.0", 3, 0, true, true},
		{"1", 3, 1000, true, true},
		{"1682725898094377", 3, 1682725898094377000, true, true},
		{"1682725898094377.0005", 3, 1682725898094377001, false, true},
		{"1682725898094377.00049", 3, 1682725898094377000, false, true},
		{"30669.0", 3, 30669000, true, true},
		{"0.0005", 3, 1, false, true},
		{"-0.0005", 3, -1, false, true},
		{"-2.4996", 3, -2500, false, true},
		{"1e-3", 3, 1, true, true},
		{"1E-4", 3, 0, false, true},
		{"2.5e2", 0, 250, true, true},
		{"0000012", 0, 12, true, true},
		{".5", 0, 1, false, true},
		{"5.", 0, 5, true, true},
		{"+7", 0, 7, true, true},
		{"9223372036854775807", 0, 9223372036854775807, true, true},
		{"9223372036854775807.4", 0, 9223372036854775807, false, true},
		{"9223372036854775807.5", 0, 0, false, false},
		{"9223372036854775808", 0, 0, false, false},
		{"9223372036854775.807", 3, 9223372036854775807, true, true},
		{"1e19", 0, 0, false, false},
		{"0e999999999999", 3, 0, true, true},
		{"1e-999999999999", 3, 0, false, true},
		{"", 3, 0, false, false},
		{"-", 3, 0, false, false},
		{".", 3, 0, false, false},
		{"1e", 3, 0, false, false},
		{"1e+", 3, 0, false, false},
		{"abc", 3, 0, false, false},
		{"1.2.3", 3, 0, false, false},
		{" 1", 3, 0, false, false},
		{"NaN", 3, 0, false, false},
		{"0x10", 3, 0, false, false},
	}
	for _, tc := range cases {
		v, exact, ok := parseDecimal(tc.in, tc.shift)
		if v != tc.v || exact != tc.exact || ok != tc.ok {
			t.Errorf("parseDecimal(%q, %d) = %d, %v, %v; want %d, %v, %v", tc.in, tc.shift, v, exact, ok, tc.v, tc.exact, tc.ok)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(realdata, "sampled_rank-0.json.gz"))
	if err != nil {
		b.Fatal(err)
	}
	plain := gunzip(b, data)
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(plain), "rank-0.json"); err != nil {
			b.Fatal(err)
		}
	}
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
