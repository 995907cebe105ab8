// Package ping is the minimal timestamped-datagram exchange: every node
// pings each of its peers at a fixed interval, the peer answers, and the
// pinger derives the NTP-style offset and round-trip delay from four
// timestamps.
//
// The exchange is interleaved, as chrony's xleave mode: a datagram cannot
// carry its own transmit timestamp, so each reply carries the receive
// timestamp of the previous ping from that pinger and the transmit
// timestamp of the previous reply, both as the world returned them (kernel
// timestamps on the real backend), and the pinger completes the previous
// exchange with its own transmit timestamp of that ping and receive
// timestamp of that reply. No time is read in user space between a
// datagram's arrival or departure and its timestamp.
//
// It is protocol code: it uses only its [world.Env].
package ping

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/chronosync/chronosync/world"
)

// Port is the UDP port every node pings and answers on.
const Port = 7000

// Config is the exchange's parameters.
type Config struct {
	Interval time.Duration // between two rounds of pings; > 0
	Payload  int           // datagram size in bytes; at least HeaderSize
}

// HeaderSize is the size of a ping or reply without padding: kind, seq,
// three times, and the previous exchange's seq and two times.
const HeaderSize = 1 + 4 + 3*8 + 4 + 2*8

// Exchange is one completed ping: the four timestamps, each on the clock of
// the node that took it. T1 and T4 are on the pinger's host clock, T2 and T3
// on the peer's.
type Exchange struct {
	Peer           world.NodeID
	Seq            uint32
	T1, T2, T3, T4 world.Time
}

// Offset is the NTP estimate of the peer's clock minus the pinger's:
// ((T2-T1) + (T3-T4)) / 2.
func (e Exchange) Offset() time.Duration {
	return (e.T2.Sub(e.T1) + e.T3.Sub(e.T4)) / 2
}

// Delay is the round-trip delay without the peer's turnaround:
// (T4-T1) - (T3-T2).
func (e Exchange) Delay() time.Duration {
	return e.T4.Sub(e.T1) - e.T3.Sub(e.T2)
}

// Stats are one node's counters.
type Stats struct {
	Sent, Answered, Received, Malformed int
}

// Node is the ping program of one node.
type Node struct {
	cfg     Config
	observe func(Exchange)
	env     world.Env
	conn    world.PacketConn
	seq     uint32
	buf     []byte
	stats   Stats
	// sent holds, per peer, the pinger's side of its recent pings.
	sent map[world.NodeID]*[pending]sentPing
	// answered holds, per pinger, the responder's side of its last reply.
	answered map[world.NodeID]answer
}

// pending is how many recent pings per peer the pinger remembers.
const pending = 8

// sentPing is the pinger's side of one ping: its transmit time and the
// reply's receive time, once it arrived.
type sentPing struct {
	seq    uint32
	t1, t4 world.Time
	got    bool
}

// answer is the responder's side of its last reply to a pinger.
type answer struct {
	seq    uint32
	t2, t3 world.Time
}

// New returns a ping program. observe, if not nil, is called for every
// completed exchange, on the node's event loop.
func New(cfg Config, observe func(Exchange)) (*Node, error) {
	if cfg.Interval <= 0 {
		return nil, fmt.Errorf("ping: interval %v must be > 0", cfg.Interval)
	}
	if cfg.Payload < HeaderSize {
		return nil, fmt.Errorf("ping: payload %d bytes is smaller than the %d-byte header", cfg.Payload, HeaderSize)
	}
	return &Node{cfg: cfg, observe: observe, buf: make([]byte, cfg.Payload),
		sent: map[world.NodeID]*[pending]sentPing{}, answered: map[world.NodeID]answer{}}, nil
}

// Stats returns the node's counters so far.
func (p *Node) Stats() Stats { return p.stats }

// Start opens the endpoint and schedules the first round. It implements
// [world.Program].
func (p *Node) Start(env world.Env) error {
	p.env = env
	c, err := env.ListenPacket(Port, p.receive)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	p.conn = c
	env.Logger().Info("ping started", "peers", len(env.Peers()), "interval", p.cfg.Interval)
	// Spread the nodes' first rounds over one interval.
	env.AfterFunc(time.Duration(env.Rand().Int64N(int64(p.cfg.Interval))), p.round)
	return nil
}

const (
	kindPing  = 'P'
	kindReply = 'R'
)

func (p *Node) round() {
	for _, peer := range p.env.Peers() {
		p.seq++
		p.buf[0] = kindPing
		binary.BigEndian.PutUint32(p.buf[1:], p.seq)
		binary.BigEndian.PutUint64(p.buf[5:], uint64(p.env.Host().Now()))
		clear(p.buf[13:])
		tx, err := p.conn.Send(world.Addr{Node: peer, Port: Port}, p.buf)
		if err != nil {
			p.env.Logger().Warn("ping send failed", "peer", peer, "err", err)
			continue
		}
		p.stats.Sent++
		ring := p.sent[peer]
		if ring == nil {
			ring = new([pending]sentPing)
			p.sent[peer] = ring
		}
		ring[p.seq%pending] = sentPing{seq: p.seq, t1: tx}
	}
	p.env.AfterFunc(p.cfg.Interval, p.round)
}

func (p *Node) receive(pkt world.Packet) {
	d := pkt.Data
	if len(d) < HeaderSize {
		p.stats.Malformed++
		return
	}
	switch d[0] {
	case kindPing:
		// Answer with T1 echoed, T2 = our receive timestamp, T3 = now
		// (the basic exchange), and the previous exchange's T2 and the
		// transmit timestamp of our previous reply (the interleaved one).
		from := pkt.From.Node
		copy(p.buf, d[:13])
		p.buf[0] = kindReply
		binary.BigEndian.PutUint64(p.buf[13:], uint64(pkt.RxTime))
		binary.BigEndian.PutUint64(p.buf[21:], uint64(p.env.Host().Now()))
		prev := p.answered[from]
		binary.BigEndian.PutUint32(p.buf[29:], prev.seq)
		binary.BigEndian.PutUint64(p.buf[33:], uint64(prev.t2))
		binary.BigEndian.PutUint64(p.buf[41:], uint64(prev.t3))
		tx, err := p.conn.Send(pkt.From, p.buf)
		if err == nil {
			p.stats.Answered++
			p.answered[from] = answer{seq: binary.BigEndian.Uint32(d[1:]), t2: pkt.RxTime, t3: tx}
		}
	case kindReply:
		p.stats.Received++
		ring := p.sent[pkt.From.Node]
		if ring == nil {
			return
		}
		if s := &ring[binary.BigEndian.Uint32(d[1:])%pending]; s.seq == binary.BigEndian.Uint32(d[1:]) {
			s.t4, s.got = pkt.RxTime, true
		}
		prevSeq := binary.BigEndian.Uint32(d[29:])
		s := ring[prevSeq%pending]
		if prevSeq == 0 || s.seq != prevSeq || !s.got || p.observe == nil {
			return
		}
		p.observe(Exchange{
			Peer: pkt.From.Node,
			Seq:  prevSeq,
			T1:   s.t1,
			T2:   world.Time(binary.BigEndian.Uint64(d[33:])),
			T3:   world.Time(binary.BigEndian.Uint64(d[41:])),
			T4:   s.t4,
		})
	default:
		p.stats.Malformed++
	}
}
