package auth

import (
	"bytes"
	"testing"
)

// FuzzOpen: no input but the genuine sealed message opens (the fuzzer
// cannot forge a tag), and that one opens once, with its message.
func FuzzOpen(f *testing.F) {
	k, err := NewKey(bytes.Repeat([]byte{9}, MinKeySize))
	if err != nil {
		f.Fatal(err)
	}
	msg := []byte("a probe of 48 bytes, more or less, for the seed.")
	genuine := NewSealer(k, dgram, 2, 0, 0).Seal(nil, msg)
	f.Add(genuine)
	f.Add(genuine[:len(genuine)-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		o := NewOpener(k, dgram, 0, 4)
		got, sender, err := o.Open(data)
		if !bytes.Equal(data, genuine) {
			if err == nil {
				t.Fatalf("%x opened (sender %d, message %q) without being sealed", data, sender, got)
			}
			return
		}
		if err != nil || sender != 2 || !bytes.Equal(got, msg) {
			t.Fatalf("the genuine message: %q from %d, %v", got, sender, err)
		}
		if _, _, err := o.Open(data); err == nil {
			t.Fatal("the genuine message opened twice")
		}
	})
}
