// Package auth authenticates a cluster's messages with a shared key: each
// sealed message carries its sender, its receiver, a sequence number and a
// MAC over all of them and the channel's context (HMAC-SHA256 from the
// standard library, truncated to 16 bytes), so that a process on the
// network without the key can neither forge a message nor replay one it
// saw, nor redirect one meant for another node or another channel. The
// receiver keeps, per sender, the highest sequence number seen and a
// window of the 64 before it, as IPsec and WireGuard do: a message older
// than the window or seen already is a replay.
//
// A channel's context is what binds its messages to it: a fixed label for
// a cluster's datagrams, the label and both ends' nonces for one stream
// connection (so that a recorded connection replayed on a new one opens
// nothing).
//
// It does no I/O besides LoadKey and keeps no global state; a Sealer and
// an Opener each belong to one goroutine (a node's loop, a stream's
// reader or writer), or are guarded by their user.
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

	"github.com/chronosync/chronosync/infile"
)

// Sizes of the sealed form: msg ‖ from (4 bytes) ‖ to (4) ‖ seq (8) ‖ tag
// (16).
const (
	TagSize     = 16
	trailerSize = 4 + 4 + 8 + TagSize
	// Overhead is how many bytes Seal adds to a message.
	Overhead = trailerSize
	// MinKeySize is the shortest key LoadKey accepts, in bytes.
	MinKeySize = 32
	// MaxContext is the longest context a channel may have.
	MaxContext = 256
	// window is how many sequence numbers before the highest seen a
	// receiver still accepts once (reordering on the network).
	window = 64
)

// Errors of Open.
var (
	// ErrMalformed: too short to carry the trailer.
	ErrMalformed = errors.New("auth: message too short to be sealed")
	// ErrForged: the tag does not match (another key, another channel, or
	// altered bytes).
	ErrForged = errors.New("auth: MAC does not match: forged, altered or sealed with another key")
	// ErrReplayed: the sequence number was seen already, or is older than
	// the window.
	ErrReplayed = errors.New("auth: replayed (sequence number seen already or too old)")
	// ErrMisdirected: genuine, but sealed for another receiver, or by a
	// sender the cluster does not have.
	ErrMisdirected = errors.New("auth: sealed for another receiver or by a sender beyond the cluster")
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
// may read is refused: the key is the cluster's only secret. So is anything
// but a regular file, and a file over infile.MaxKey (4 KiB), unread.
func LoadKey(path string) (*Key, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("auth: key file %s is readable by others (mode %v); expected mode 0600 (chmod 600 %s)", path, st.Mode().Perm(), path)
	}
	data, err := infile.ReadFile(path, infile.Key)
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

// mac is HMAC-SHA256 under a key, with a channel's context written ahead
// of every message.
type mac struct {
	h   hash.Hash
	ctx []byte
	sum [sha256.Size]byte
}

func newMAC(k *Key, context []byte) mac {
	if len(context) > MaxContext {
		panic(fmt.Sprintf("auth: context of %d bytes, over the %d limit", len(context), MaxContext))
	}
	// The context's length goes first, so that no two contexts' MAC
	// inputs run into each other.
	ctx := binary.BigEndian.AppendUint16(nil, uint16(len(context)))
	return mac{h: hmac.New(sha256.New, k.k), ctx: append(ctx, context...)}
}

func (m *mac) tag(body []byte) []byte {
	m.h.Reset()
	m.h.Write(m.ctx)
	m.h.Write(body)
	return m.h.Sum(m.sum[:0])[:TagSize]
}

// Sealer seals the messages of one sender to one receiver on one channel.
type Sealer struct {
	mac      mac
	from, to uint32
	seq      uint64
}

// NewSealer returns the sealer of from's messages to to, on the channel
// whose context is context. Sequence numbers follow start: a sender that
// restarts must start above every number it used before (the real world
// starts at the wall clock in nanoseconds).
func NewSealer(k *Key, context []byte, from, to uint32, start uint64) *Sealer {
	return &Sealer{mac: newMAC(k, context), from: from, to: to, seq: start}
}

// Seal appends msg, the sender, the receiver, the next sequence number
// and the tag to dst and returns the result.
func (s *Sealer) Seal(dst, msg []byte) []byte {
	s.seq++
	out := append(dst, msg...)
	out = binary.BigEndian.AppendUint32(out, s.from)
	out = binary.BigEndian.AppendUint32(out, s.to)
	out = binary.BigEndian.AppendUint64(out, s.seq)
	return append(out, s.mac.tag(out[len(dst):])...)
}

// Opener checks the messages sealed for one receiver on one channel.
type Opener struct {
	mac  mac
	self uint32
	// senders[i] is what was seen of sender i; senders are 0..len−1 (the
	// cluster's nodes).
	senders []replay
}

// replay is what an Opener remembers of one sender: the highest sequence
// number seen and which of the window before it were seen.
type replay struct {
	top  uint64
	seen uint64 // bit i: top−i seen
}

// NewOpener returns the opener of messages to self, on the channel whose
// context is context, from the senders 0..senders−1.
func NewOpener(k *Key, context []byte, self uint32, senders int) *Opener {
	return &Opener{mac: newMAC(k, context), self: self, senders: make([]replay, senders)}
}

// Open checks sealed and returns its message (a subslice of sealed) and
// sender. The tag is checked before anything else is believed; the
// sequence number is then recorded, so that the same message opened twice
// is a replay the second time.
func (o *Opener) Open(sealed []byte) (msg []byte, from uint32, err error) {
	if len(sealed) < trailerSize {
		return nil, 0, ErrMalformed
	}
	body, tag := sealed[:len(sealed)-TagSize], sealed[len(sealed)-TagSize:]
	if !hmac.Equal(o.mac.tag(body), tag) {
		return nil, 0, ErrForged
	}
	n := len(body) - 16
	from = binary.BigEndian.Uint32(body[n:])
	to := binary.BigEndian.Uint32(body[n+4:])
	seq := binary.BigEndian.Uint64(body[n+8:])
	if to != o.self || uint64(from) >= uint64(len(o.senders)) {
		return nil, from, ErrMisdirected
	}
	if !o.senders[from].accept(seq) {
		return nil, from, ErrReplayed
	}
	return body[:n], from, nil
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
