package real

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/world"
)

// The channels' contexts (package auth): every datagram of the cluster is
// on one channel; each stream connection is a channel of its own, its
// context ending with both ends' nonces.
var (
	datagramContext = []byte("chronosync/datagram/v1")
	streamContext   = []byte("chronosync/stream/v1")
)

// nonceSize is the size of each end's nonce in a stream's handshake.
const nonceSize = 16

// AuthDrops count the datagrams and stream frames a keyed world dropped
// on receipt (Config.Key).
type AuthDrops struct {
	// Forged: the MAC did not match: sent without the key (or with
	// another), altered on the way, or too short to be sealed.
	Forged uint64 `json:"forged"`
	// Replayed: genuine, but its sequence number was seen already or is
	// older than the replay window.
	Replayed uint64 `json:"replayed"`
	// Misdirected: genuine, but sealed for another node, or by a node
	// other than the one whose address it came from.
	Misdirected uint64 `json:"misdirected"`
}

// authCounters are a World's AuthDrops, counted from many goroutines,
// and which kinds of message (datagram, stream frame) were logged for
// which reason.
type authCounters struct {
	forged, replayed, misdirected atomic.Uint64
	logged                        [2][3]atomic.Bool
}

func (c *authCounters) load() AuthDrops {
	return AuthDrops{Forged: c.forged.Load(), Replayed: c.replayed.Load(), Misdirected: c.misdirected.Load()}
}

// count counts a refused message (a stream frame if frame, else a
// datagram) by its reason and says whether it is the first of its kind
// and reason (to be logged).
func (c *authCounters) count(frame bool, err error) bool {
	why := 0
	switch {
	case errors.Is(err, auth.ErrReplayed):
		c.replayed.Add(1)
		why = 1
	case errors.Is(err, auth.ErrMisdirected):
		c.misdirected.Add(1)
		why = 2
	default:
		c.forged.Add(1)
	}
	kind := 0
	if frame {
		kind = 1
	}
	return !c.logged[kind][why].Swap(true)
}

// AuthDrops returns how many datagrams and stream frames were dropped
// because they did not open under the cluster's key; all zero without one.
func (w *World) AuthDrops() AuthDrops { return w.auth.load() }

// Authenticated reports whether the world seals its messages.
func (w *World) Authenticated() bool { return w.cfg.Key != nil }

// keyring is a node's datagram sealers (one per receiver) and opener, for
// a keyed world. It outlives the node's incarnations, so that a restarted
// node goes on from its sequence numbers. Its sealers are used from the
// loop, its opener from every endpoint's reader goroutine.
type keyring struct {
	mu      sync.Mutex
	key     *auth.Key
	self    world.NodeID
	start   uint64
	sealers map[world.NodeID]*auth.Sealer
	opener  *auth.Opener
}

// newKeyring returns node self's keyring in a cluster of nodes nodes.
// Sequence numbers start at the wall clock in nanoseconds: above any this
// node sent before, also from a process that ran it before this one.
func newKeyring(key *auth.Key, self world.NodeID, nodes int) *keyring {
	return &keyring{
		key: key, self: self, start: uint64(time.Now().UnixNano()),
		sealers: map[world.NodeID]*auth.Sealer{},
		opener:  auth.NewOpener(key, datagramContext, uint32(self), nodes),
	}
}

// seal returns data sealed for node to.
func (k *keyring) seal(to world.NodeID, data []byte) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.sealers[to]
	if s == nil {
		s = auth.NewSealer(k.key, datagramContext, uint32(k.self), uint32(to), k.start)
		k.sealers[to] = s
	}
	return s.Seal(make([]byte, 0, len(data)+auth.Overhead), data)
}

// open checks a datagram that came from node src's address and returns
// its message.
func (k *keyring) open(src world.NodeID, sealed []byte) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	msg, from, err := k.opener.Open(sealed)
	if err == nil && world.NodeID(from) != src {
		return nil, fmt.Errorf("sealed by node %d, sent from node %d's address: %w", from, src, auth.ErrMisdirected)
	}
	return msg, err
}

// refused counts a message that did not open and logs the first of each
// kind and reason.
func (n *node) refused(frame bool, from world.Addr, err error) {
	what := "datagram"
	if frame {
		what = "stream frame"
	}
	if n.w.auth.count(frame, err) {
		n.log.Warn(what+" dropped: it does not open under the cluster key (further ones like it are only counted)", "from", from.String(), "err", err)
	}
}

// streamAuth is one keyed stream connection's sealer (used by its writer)
// and opener (used by its reader).
type streamAuth struct {
	sealer *auth.Sealer
	opener *auth.Opener
}

// handshake exchanges nonces on a new connection of a keyed world and
// returns the connection's sealer and opener: their context holds both
// nonces, so that nothing recorded from another connection opens on this
// one. Both ends write their nonce before reading the other's.
func (s *stream) handshake(c net.Conn, dialer bool) (*streamAuth, error) {
	var mine, theirs [nonceSize]byte
	if _, err := rand.Read(mine[:]); err != nil {
		return nil, fmt.Errorf("stream nonce: %w", err)
	}
	if err := c.SetDeadline(time.Now().Add(dialTimeout)); err != nil {
		return nil, err
	}
	if _, err := c.Write(mine[:]); err != nil {
		return nil, fmt.Errorf("stream handshake with %v: %w", s.remote, err)
	}
	if _, err := io.ReadFull(c, theirs[:]); err != nil {
		return nil, fmt.Errorf("stream handshake with %v: no nonce: %w", s.remote, err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	first, second := mine[:], theirs[:]
	if !dialer {
		first, second = second, first
	}
	ctx := append(append(append([]byte(nil), streamContext...), first...), second...)
	key, self, remote := s.n.w.cfg.Key, uint32(s.n.id), uint32(s.remote.Node)
	return &streamAuth{
		sealer: auth.NewSealer(key, ctx, self, remote, 0),
		opener: auth.NewOpener(key, ctx, self, len(s.n.w.nodes)),
	}, nil
}

// open checks a frame from the stream's peer and returns its message.
func (a *streamAuth) open(remote world.NodeID, frame []byte) ([]byte, error) {
	msg, from, err := a.opener.Open(frame)
	if err == nil && world.NodeID(from) != remote {
		return nil, fmt.Errorf("sealed by node %d on a stream from node %d: %w", from, remote, auth.ErrMisdirected)
	}
	return msg, err
}
