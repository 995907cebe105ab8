package auth

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/probe"
)

func testKey(t testing.TB, fill byte) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{fill}, MinKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var dgram = []byte("test/datagram")

// TestOpen: a sealed message opens once, with its sender; any altered byte,
// another key, another channel or a second opening is refused with its
// reason.
func TestOpen(t *testing.T) {
	k := testKey(t, 1)
	msg := []byte("probe request: window 3, pair 7, slot 2")
	sealed := NewSealer(k, dgram, 5, 1, 100).Seal(nil, msg)
	if len(sealed) != len(msg)+Overhead {
		t.Fatalf("sealed %d bytes, want %d", len(sealed), len(msg)+Overhead)
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x20
		if _, _, err := NewOpener(k, dgram, 1, 8).Open(bad); !errors.Is(err, ErrForged) {
			t.Fatalf("byte %d of %d altered: err %v, want ErrForged", i, len(sealed), err)
		}
	}
	if _, _, err := NewOpener(testKey(t, 2), dgram, 1, 8).Open(sealed); !errors.Is(err, ErrForged) {
		t.Errorf("another key: err %v, want ErrForged", err)
	}
	if _, _, err := NewOpener(k, []byte("test/stream"), 1, 8).Open(sealed); !errors.Is(err, ErrForged) {
		t.Errorf("another channel: err %v, want ErrForged", err)
	}
	if _, _, err := NewOpener(k, dgram, 1, 8).Open(sealed[:Overhead-1]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: err %v, want ErrMalformed", err)
	}
	o := NewOpener(k, dgram, 1, 8)
	got, sender, err := o.Open(sealed)
	if err != nil || sender != 5 || !bytes.Equal(got, msg) {
		t.Fatalf("Open = %q, sender %d, %v; want the message from 5", got, sender, err)
	}
	if _, _, err := o.Open(sealed); !errors.Is(err, ErrReplayed) {
		t.Errorf("opened twice: err %v, want ErrReplayed", err)
	}
}

// TestReplayWindow: messages reordered within the window open once each;
// one older than the window does not.
func TestReplayWindow(t *testing.T) {
	k := testKey(t, 1)
	s := NewSealer(k, dgram, 1, 0, 0)
	var sealed [][]byte
	for i := range window + 10 {
		sealed = append(sealed, s.Seal(nil, []byte{byte(i)}))
	}
	o := NewOpener(k, dgram, 0, 2)
	for i, j := range []int{5, 3, 4, 0, window + 9, 12, 11} {
		if _, _, err := o.Open(sealed[j]); err != nil {
			t.Errorf("message %d (%d-th opened): err %v, want it opened", j, i, err)
		}
	}
	for _, j := range []int{0, 5, window + 9} {
		if _, _, err := o.Open(sealed[j]); !errors.Is(err, ErrReplayed) {
			t.Errorf("message %d again: err %v, want ErrReplayed", j, err)
		}
	}
	// Sequence numbers 1 and 2 (messages 0, 1) are window+8 and more
	// below the highest seen (window+10): too old, whether seen or not.
	if _, _, err := o.Open(sealed[1]); !errors.Is(err, ErrReplayed) {
		t.Errorf("a message older than the window: err %v, want ErrReplayed", err)
	}
	if _, _, err := o.Open(sealed[window+8]); err != nil {
		t.Errorf("a message within the window, not seen yet: %v", err)
	}
}

// TestRestart: a sender that starts again above the numbers it used is
// heard; one that starts again from where it began is a replay.
func TestRestart(t *testing.T) {
	k := testKey(t, 1)
	o := NewOpener(k, dgram, 0, 2)
	first := NewSealer(k, dgram, 1, 0, 1000)
	for range 10 {
		if _, _, err := o.Open(first.Seal(nil, []byte("x"))); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := o.Open(NewSealer(k, dgram, 1, 0, 2000).Seal(nil, []byte("x"))); err != nil {
		t.Errorf("restarted above: %v", err)
	}
	if _, _, err := o.Open(NewSealer(k, dgram, 1, 0, 1000).Seal(nil, []byte("x"))); !errors.Is(err, ErrReplayed) {
		t.Errorf("restarted from the old start: err %v, want ErrReplayed", err)
	}
}

// TestMisdirected: a genuine message for another receiver, or from a
// sender beyond the cluster, does not open (nor does it take the window of
// a sender that is).
func TestMisdirected(t *testing.T) {
	k := testKey(t, 1)
	o := NewOpener(k, dgram, 0, 2)
	for _, tc := range []struct {
		from, to uint32
		err      error
	}{
		{1, 0, nil},
		{1, 2, ErrMisdirected},
		{2, 0, ErrMisdirected},
		{1 << 31, 0, ErrMisdirected},
		{0, 0, nil},
	} {
		_, _, err := o.Open(NewSealer(k, dgram, tc.from, tc.to, 0).Seal(nil, []byte("x")))
		if !errors.Is(err, tc.err) && err != tc.err {
			t.Errorf("from %d to %d: err %v, want %v", tc.from, tc.to, err, tc.err)
		}
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hex64 := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, text string
		mode       os.FileMode
		err        string
	}{
		{"good", hex64 + "\n", 0o600, ""},
		{"readable", hex64, 0o644, "readable by others"},
		{"not hex", "zz" + hex64[2:], 0o600, "expected hex digits"},
		{"short", hex64[:40], 0o600, "key of 20 bytes; expected at least 32"},
	} {
		_, err := LoadKey(write(tc.name, tc.text, tc.mode))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
		}
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing key file was loaded")
	}
}

// BenchmarkSealOpen seals and opens a probe datagram (probe.PacketSize
// bytes): the CPU the key adds to each probe datagram, the sender's seal
// and the receiver's open together.
func BenchmarkSealOpen(b *testing.B) {
	k := testKey(b, 1)
	s, o := NewSealer(k, dgram, 1, 0, 0), NewOpener(k, dgram, 0, 2)
	msg := make([]byte, probe.PacketSize)
	buf := make([]byte, 0, len(msg)+Overhead)
	b.ReportAllocs()
	for b.Loop() {
		sealed := s.Seal(buf[:0], msg)
		if _, _, err := o.Open(sealed); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/datagram")
}
