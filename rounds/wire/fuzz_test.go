package wire

import (
	"errors"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzUnmarshal checks that Unmarshal never panics, that it fails only
// with the package's sentinels, and that a frame it accepts re-marshals to
// an equivalent message. The corpus starts from every good and bad frame of
// the tests.
func FuzzUnmarshal(f *testing.F) {
	for _, tc := range kinds {
		f.Add(mustMarshal(f, tc.env), uint16(0))
	}
	for _, tc := range badFrames(f) {
		f.Add(tc.frame, uint16(min(tc.max, math.MaxUint16)))
	}
	f.Fuzz(func(t *testing.T, frame []byte, max uint16) {
		env, err := Unmarshal(frame, int(max))
		if err != nil {
			if env != nil {
				t.Fatalf("Unmarshal returned a message with error %v", err)
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOversize) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrOversize", err)
			}
			return
		}
		if Kind(env) == "empty" {
			t.Fatalf("accepted an envelope with no body")
		}
		// Re-encoding may be longer than the input (an int32 sent as a
		// 5-byte varint comes back as 10 bytes when negative), so it
		// gets a cap of its own.
		again, err := Marshal(env, math.MaxInt32)
		if err != nil {
			t.Fatalf("re-marshaling an accepted %s frame: %v", Kind(env), err)
		}
		env2, err := Unmarshal(again, math.MaxInt32)
		if err != nil {
			t.Fatalf("unmarshaling the re-marshaled %s frame: %v", Kind(env), err)
		}
		if !proto.Equal(env, env2) {
			t.Fatalf("re-marshaled %s frame decodes to a different message", Kind(env))
		}
	})
}
