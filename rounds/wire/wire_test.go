package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/rounds/syncpb"
)

func edge(i int) *syncpb.EdgeAlphaBeta {
	return &syncpb.EdgeAlphaBeta{
		SrcNodeId:    int32(i % 8),
		DstNodeId:    int32(i%8 + 1),
		Alpha:        1 + float64(i)*1e-6,
		Beta:         -1234.5 * float64(i),
		PairsCount:   int32(100 + i),
		LostCount:    int32(i % 3),
		SigmaNs:      12.25,
		AlphaSigma:   3e-9,
		Estimator:    "huber",
		Insufficient: i%5 == 0,
		StepDetected: i%7 == 0,
		Steps:        []*syncpb.EdgeStep{{AtNs: -int64(i) * 1_000_000, AfterNs: -int64(i)*1_000_000 - 800_000}},
		PurePairs:    int32(50 + i),
		SentPairs:    int32(110 + i),
		MarginNs:     40.5,
	}
}

func windowData(node, edges int) *syncpb.NodeWindowData {
	w := &syncpb.NodeWindowData{
		NodeId:        int32(node),
		WindowId:      42,
		RoundId:       7,
		WindowStartNs: -5_000_000_000, // simulated clocks can read negative
		WindowEndNs:   -4_000_000_000,
		Incarnation:   3,
	}
	for i := range edges {
		w.Edges = append(w.Edges, edge(i))
	}
	return w
}

// kinds is one envelope of every body, named as Kind names it.
var kinds = []struct {
	kind string
	env  *syncpb.Envelope
}{
	{"hello", &syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 4, Incarnation: 2, LastRoundId: 99}}}},
	{"round_start", &syncpb.Envelope{Body: &syncpb.Envelope_RoundStart{RoundStart: &syncpb.RoundStart{RoundId: 100, SequenceNumber: 5, WindowNs: 1e9, CadenceNs: 2e9}}}},
	{"round_end", &syncpb.Envelope{Body: &syncpb.Envelope_RoundEnd{RoundEnd: &syncpb.RoundEnd{RoundId: 100, SequenceNumber: 6}}}},
	{"window", &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: windowData(2, 3)}}},
	{"heartbeat", &syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{Seq: 1 << 40, SentNs: math.MinInt64}}}},
	{"global", &syncpb.Envelope{Body: &syncpb.Envelope_Global{Global: &syncpb.GlobalWindowData{
		WindowId: 42, RoundId: 7, WindowStartNs: -1, WindowEndNs: 1,
		AllNodes:       []*syncpb.NodeWindowData{windowData(1, 2), windowData(2, 0), windowData(3, 1)},
		SequenceNumber: 8,
	}}}},
	{"round_result", &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: &syncpb.RoundResult{
		RoundId: 7, SequenceNumber: 7, ReferenceNode: 0, NodeId: 3, WindowId: 9, WindowStartNs: -5e9, WindowEndNs: -4e9,
		OffsetNs: -1234.5, DriftPpm: 3.25, UncertaintyNs: 40, DriftUncertaintyPpm: 0.01,
		Steps:     []*syncpb.ResultStep{{AtNs: -4.5e9, AtUncertaintyNs: 1e5, SizeNs: 2e6, SizeUncertaintyNs: 30}},
		SelfCheck: &syncpb.ResultSelfCheck{Predictions: 6, WithinThreeSigma: 6, MaxSigma: 1.5},
		Degraded:  2, SequenceSkewNs: 20000,
	}}}},
	// A body holding an all-default message is still a body.
	{"heartbeat", &syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{}}}},
}

func TestRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range kinds {
		t.Run(tc.kind, func(t *testing.T) {
			if got := Kind(tc.env); got != tc.kind {
				t.Errorf("Kind = %q, want %q", got, tc.kind)
			}
			frame, err := Marshal(tc.env, 0)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if n := binary.BigEndian.Uint32(frame); int(n) != len(frame)-PrefixLen || int(n) != proto.Size(tc.env) {
				t.Errorf("prefix %d, payload %d bytes, proto.Size %d", n, len(frame)-PrefixLen, proto.Size(tc.env))
			}
			got, err := Unmarshal(frame, 0)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !proto.Equal(got, tc.env) {
				t.Errorf("round trip changed the message:\n got  %v\n want %v", got, tc.env)
			}
			if Kind(got) != tc.kind {
				t.Errorf("Kind after round trip = %q, want %q", Kind(got), tc.kind)
			}
			seen[tc.kind] = true
		})
	}
	// Every body the Envelope declares is covered above.
	oneof := bodyOneof.Fields()
	for i := range oneof.Len() {
		if name := string(oneof.Get(i).Name()); !seen[name] {
			t.Errorf("no round-trip case for body %q", name)
		}
	}
}

func TestAppendFrame(t *testing.T) {
	prefix := []byte("keep")
	var want []byte
	buf := append([]byte(nil), prefix...)
	for _, tc := range kinds {
		var err error
		if buf, err = AppendFrame(buf, tc.env, 0); err != nil {
			t.Fatal(err)
		}
		f, _ := Marshal(tc.env, 0)
		want = append(want, f...)
	}
	if !bytes.HasPrefix(buf, prefix) || !bytes.Equal(buf[len(prefix):], want) {
		t.Fatalf("AppendFrame did not append the frames Marshal makes")
	}
	// On error dst comes back unchanged.
	big := &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: windowData(1, 64)}}
	out, err := AppendFrame(buf, big, 16)
	if !errors.Is(err, ErrOversize) || !bytes.Equal(out, buf) {
		t.Fatalf("AppendFrame over the cap: err %v, dst changed %v", err, !bytes.Equal(out, buf))
	}
}

func TestKind(t *testing.T) {
	if got := Kind(nil); got != "empty" {
		t.Errorf("Kind(nil) = %q", got)
	}
	if got := Kind(&syncpb.Envelope{}); got != "empty" {
		t.Errorf("Kind(empty) = %q", got)
	}
}

// frameOf prefixes payload with its own length.
func frameOf(payload []byte) []byte {
	return withPrefix(uint32(len(payload)), payload)
}

// withPrefix prefixes payload with a declared length.
func withPrefix(declared uint32, payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, declared), payload...)
}

func mustMarshal(t testing.TB, env *syncpb.Envelope) []byte {
	t.Helper()
	f, err := Marshal(env, math.MaxInt32)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func hello() *syncpb.Envelope {
	return &syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 1, Incarnation: 1}}}
}

// unknownBody is an Envelope whose only field, number 99, this version
// does not know: what a newer peer's new body kind looks like.
func unknownBody() []byte {
	b := protowire.AppendTag(nil, 99, protowire.BytesType)
	return protowire.AppendBytes(b, []byte{0x08, 0x01})
}

// badFrames are frames Unmarshal must refuse, with the sentinel and a
// fragment of the message it must give. FuzzUnmarshal starts from them.
func badFrames(t testing.TB) []struct {
	name  string
	frame []byte
	max   int
	want  error
	msg   string
} {
	good := mustMarshal(t, hello())
	bigWindow := mustMarshal(t, &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: windowData(1, 64)}})
	return []struct {
		name  string
		frame []byte
		max   int
		want  error
		msg   string
	}{
		{"nil", nil, 0, ErrMalformed, "frame is 0 bytes, shorter than its 4-byte length prefix"},
		{"truncated prefix", []byte{0, 0, 1}, 0, ErrMalformed, "frame is 3 bytes, shorter than its 4-byte length prefix"},
		{"payload shorter than declared", good[:len(good)-1], 0, ErrMalformed,
			"declares " + strconv.Itoa(len(good)-PrefixLen) + " bytes but carries " + strconv.Itoa(len(good)-PrefixLen-1)},
		{"payload longer than declared", append(append([]byte(nil), good...), 0), 0, ErrMalformed,
			"declares " + strconv.Itoa(len(good)-PrefixLen) + " bytes but carries " + strconv.Itoa(len(good)-PrefixLen+1)},
		{"prefix only", withPrefix(10, nil), 0, ErrMalformed, "declares 10 bytes but carries 0"},
		{"oversize by prefix", withPrefix(70000000, []byte{1, 2, 3}), 0, ErrOversize, "frame declares 70000000 bytes, cap 1048576"},
		{"oversize by prefix, max uint32", withPrefix(math.MaxUint32, nil), 0, ErrOversize, "frame declares 4294967295 bytes, cap 1048576"},
		{"oversize by payload", bigWindow, 1000, ErrOversize, "frame declares " + strconv.Itoa(len(bigWindow)-PrefixLen) + " bytes, cap 1000"},
		{"one byte over a small cap", frameOf(make([]byte, 9)), 8, ErrOversize, "frame declares 9 bytes, cap 8"},
		{"garbage: truncated field", frameOf([]byte{0x0a, 0x05, 0x01}), 0, ErrMalformed, "3-byte payload is not an Envelope"},
		{"garbage: bad wire type", frameOf([]byte{0xff, 0xff, 0xff, 0xff}), 0, ErrMalformed, "4-byte payload is not an Envelope"},
		{"garbage: text", frameOf([]byte("hello, world")), 0, ErrMalformed, "payload is not an Envelope"},
		{"garbage: bad utf-8 in a string", frameOf(badUTF8Estimator()), 0, ErrMalformed, "payload is not an Envelope"},
		{"empty envelope", frameOf(nil), 0, ErrMalformed, "envelope has no body (0-byte payload)"},
		{"unknown body only", frameOf(unknownBody()), 0, ErrMalformed, "envelope has no known body (5 bytes of unknown fields: a newer peer?)"},
	}
}

// badUTF8Estimator is a window body whose one edge names its estimator
// with invalid UTF-8, which proto3 refuses.
func badUTF8Estimator() []byte {
	e := protowire.AppendTag(nil, 9, protowire.BytesType)
	e = protowire.AppendBytes(e, []byte{0xff, 0xfe})
	w := protowire.AppendTag(nil, 6, protowire.BytesType)
	w = protowire.AppendBytes(w, e)
	env := protowire.AppendTag(nil, 4, protowire.BytesType)
	return protowire.AppendBytes(env, w)
}

// TestUnknownBody: only a well-formed envelope whose sole body this
// version does not know wraps ErrUnknownBody (a reader may skip it); every
// other bad frame does not (a reader must close the stream).
func TestUnknownBody(t *testing.T) {
	for _, tc := range badFrames(t) {
		_, err := Unmarshal(tc.frame, tc.max)
		if got, want := errors.Is(err, ErrUnknownBody), tc.name == "unknown body only"; got != want {
			t.Errorf("%s: errors.Is(%q, ErrUnknownBody) = %v, want %v", tc.name, err, got, want)
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	for _, tc := range badFrames(t) {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Unmarshal(tc.frame, tc.max)
			if err == nil {
				t.Fatalf("Unmarshal accepted it: %v", env)
			}
			if env != nil {
				t.Errorf("Unmarshal returned a message with its error")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q does not wrap %v", err, tc.want)
			}
			other := ErrOversize
			if tc.want == ErrOversize {
				other = ErrMalformed
			}
			if errors.Is(err, other) {
				t.Errorf("error %q also wraps %v", err, other)
			}
			if !strings.HasPrefix(err.Error(), "wire: ") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to start with \"wire: \" and contain %q", err, tc.msg)
			}
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	big := &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: windowData(1, 64)}}
	size := proto.Size(big)
	tests := []struct {
		name string
		env  *syncpb.Envelope
		max  int
		want error
		msg  string
	}{
		{"nil", nil, 0, ErrMalformed, "wire: cannot frame an envelope with no body"},
		{"empty", &syncpb.Envelope{}, 0, ErrMalformed, "wire: cannot frame an envelope with no body"},
		{"one byte over the cap", big, size - 1, ErrOversize, "wire: window envelope is " + strconv.Itoa(size) + " bytes, cap " + strconv.Itoa(size-1)},
		{"bad utf-8", &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: &syncpb.NodeWindowData{
			Edges: []*syncpb.EdgeAlphaBeta{{Estimator: "\xff"}}}}}, 0, ErrMalformed, "wire: cannot serialize window envelope: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Marshal(tc.env, tc.max)
			if !errors.Is(err, tc.want) || f != nil {
				t.Fatalf("Marshal = %d bytes, %v; want nil, %v", len(f), err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to start with %q", err, tc.msg)
			}
		})
	}
	// Exactly at the cap is fine, and the default cap applies for max <= 0.
	if _, err := Marshal(big, size); err != nil {
		t.Errorf("Marshal at exactly the cap: %v", err)
	}
	huge := &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: windowData(1, DefaultMaxFrame/64)}}
	for _, max := range []int{0, -1} {
		if _, err := Marshal(huge, max); !errors.Is(err, ErrOversize) {
			t.Errorf("Marshal of %d bytes with max %d: %v, want ErrOversize", proto.Size(huge), max, err)
		}
	}
}

// TestUnmarshalKeepsUnknownFields checks that a field this version does
// not know survives a decode and re-encode, as a relay needs.
func TestUnmarshalKeepsUnknownFields(t *testing.T) {
	payload := mustMarshal(t, hello())[PrefixLen:]
	payload = append(payload, unknownBody()...)
	env, err := Unmarshal(frameOf(payload), 0)
	if err != nil {
		t.Fatal(err)
	}
	again := mustMarshal(t, env)
	if !bytes.Equal(again[PrefixLen:], payload) {
		t.Errorf("re-marshaled payload % x, want % x", again[PrefixLen:], payload)
	}
}
