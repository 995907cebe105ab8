// Package auth authenticates a cluster's messages with a shared key: each
// sealed message carries its sender, a sequence number and a MAC over all
// three (HMAC-SHA256 from the standard library, truncated to 16 bytes), so
// that a process on the network without the key can neither forge a
// message nor replay one it saw. The receiver keeps, per sender, the
// highest sequence number seen and a window of the 64 before it, as IPsec
// and WireGuard do: a message older than the window or seen already is a
// replay.
//
// It does no I/O besides LoadKey and keeps no global state; a Sealer and
// an Opener each belong to one goroutine (a node's loop).
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"strings"
)

// Sizes of the sealed form: msg ‖ sender (4 bytes) ‖ seq (8) ‖ tag (16).
const (
	TagSize     = 16
	trailerSize = 4 + 8 + TagSize
	// Overhead is how many bytes Seal adds to a message.
	Overhead = trailerSize
	// MinKeySize is the shortest key LoadKey accepts, in bytes.
	MinKeySize = 32
	// window is how many sequence numbers before the highest seen a
	// receiver still accepts once (reordering on the network).
	window = 64
)

// Errors of Open.
var (
	// ErrMalformed: too short to carry the trailer.
	ErrMalformed = errors.New("auth: message too short to be sealed")
	// ErrForged: the tag does not match (another key, or altered bytes).
	ErrForged = errors.New("auth: MAC does not match: forged, altered or sealed with another key")
	// ErrReplayed: the sequence number was seen already, or is older than
	// the window.
	ErrReplayed = errors.New("auth: replayed (sequence number seen already or too old)")
)

// Key is a cluster's shared key.
type Key struct{ k []byte }

// NewKey makes a Key of b (at least MinKeySize bytes), copying it.
func NewKey(b []byte) (*Key, error) {
	if len(b) < MinKeySize {
		return nil, fmt.Errorf("auth: key of %d bytes; expected at least %d", len(b), MinKeySize)
	}
	return &Key{k: append([]byte(nil), b...)}, nil
}

// LoadKey reads a key file: the key in hex (64 hex digits or more, for
// `openssl rand -hex 32`), surrounding white space ignored. A file others
// may read is refused: the key is the cluster's only secret.
func LoadKey(path string) (*Key, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("auth: key file %s is readable by others (mode %v); expected mode 0600 (chmod 600 %s)", path, st.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: key file: %w", err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("auth: key file %s: expected hex digits (openssl rand -hex 32): %w", path, err)
	}
	k, err := NewKey(b)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// Sealer seals one sender's messages.
type Sealer struct {
	mac    hash.Hash
	sender uint32
	seq    uint64
	sum    [sha256.Size]byte
}

// NewSealer returns the sealer of sender's messages under k.
func NewSealer(k *Key, sender uint32) *Sealer {
	return &Sealer{mac: hmac.New(sha256.New, k.k), sender: sender}
}

// Seal appends msg, the sender, the next sequence number and the tag to
// dst and returns the result.
func (s *Sealer) Seal(dst, msg []byte) []byte {
	s.seq++
	out := append(dst, msg...)
	out = binary.BigEndian.AppendUint32(out, s.sender)
	out = binary.BigEndian.AppendUint64(out, s.seq)
	s.mac.Reset()
	s.mac.Write(out[len(dst):])
	return append(out, s.mac.Sum(s.sum[:0])[:TagSize]...)
}

// Opener checks sealed messages from any sender under one key.
type Opener struct {
	mac     hash.Hash
	sum     [sha256.Size]byte
	senders map[uint32]*replay
	// maxSenders bounds the senders remembered: the cluster's nodes.
	maxSenders int
}

// replay is what an Opener remembers of one sender: the highest sequence
// number seen and which of the window before it were seen.
type replay struct {
	top  uint64
	seen uint64 // bit i: top−i seen
}

// NewOpener returns an opener of messages sealed under k by at most
// senders distinct senders (the cluster's nodes).
func NewOpener(k *Key, senders int) *Opener {
	return &Opener{mac: hmac.New(sha256.New, k.k), senders: map[uint32]*replay{}, maxSenders: senders}
}

// Open checks sealed and returns its message (a subslice of sealed) and
// sender. The tag is checked before anything else is believed; the
// sequence number is then recorded, so that the same message opened twice
// is a replay the second time.
func (o *Opener) Open(sealed []byte) (msg []byte, sender uint32, err error) {
	if len(sealed) < trailerSize {
		return nil, 0, ErrMalformed
	}
	body, tag := sealed[:len(sealed)-TagSize], sealed[len(sealed)-TagSize:]
	o.mac.Reset()
	o.mac.Write(body)
	if !hmac.Equal(o.mac.Sum(o.sum[:0])[:TagSize], tag) {
		return nil, 0, ErrForged
	}
	n := len(body) - 12
	sender = binary.BigEndian.Uint32(body[n:])
	seq := binary.BigEndian.Uint64(body[n+4:])
	r := o.senders[sender]
	if r == nil {
		if len(o.senders) >= o.maxSenders {
			return nil, 0, fmt.Errorf("auth: sender %d beyond the %d the cluster has", sender, o.maxSenders)
		}
		r = &replay{}
		o.senders[sender] = r
	}
	if !r.accept(seq) {
		return nil, 0, ErrReplayed
	}
	return body[:n], sender, nil
}

// accept records seq and reports whether it is new: above the highest
// seen, or within the window below it and not seen yet. Sequence numbers
// start at 1.
func (r *replay) accept(seq uint64) bool {
	switch {
	case seq == 0:
		return false
	case seq > r.top:
		shift := seq - r.top
		if shift >= window {
			r.seen = 0
		} else {
			r.seen <<= shift
		}
		r.seen |= 1
		r.top = seq
		return true
	case r.top-seq >= window:
		return false
	default:
		bit := uint64(1) << (r.top - seq)
		if r.seen&bit != 0 {
			return false
		}
		r.seen |= bit
		return true
	}
}
