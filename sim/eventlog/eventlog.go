// Package eventlog is the simulator's event log: one fixed-size record per
// event, folded into a running hash, optionally written one line per event,
// and checkpointed so that a replay can tell where two runs diverged.
//
// The line format and the meaning of every kind are documented in
// docs/event-log.md; [Legend] returns the same legend as text.
package eventlog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kind says what an event was.
type Kind uint8

// The event kinds. Their numeric values are part of the hash: append new
// kinds at the end.
const (
	Boot      Kind = iota + 1 // node booted; A=incarnation
	Crash                     // node crashed; A=incarnation that ended
	Timer                     // timer fired; A=timer id
	Send                      // datagram sent; Peer=destination node, A=ports, B=bytes, C=tx timestamp (sender's S)
	Recv                      // datagram delivered; Peer=source node, A=ports, B=bytes, C=rx timestamp (receiver's S)
	Drop                      // datagram dropped; Peer=destination node, A=reason, B=bytes
	Dial                      // stream dial; Peer=remote node, A=stream id, B=remote port
	Open                      // stream open at this end; Peer=remote node, A=stream id
	Msg                       // stream message delivered; Peer=sender node, A=stream id, B=bytes
	Close                     // stream closed at this end; Peer=remote node, A=stream id, B=reason
	Partition                 // partition begins; A=number of groups
	Heal                      // partition healed
	LinkDown                  // directed link down; Node=from, Peer=to
	LinkUp                    // directed link up; Node=from, Peer=to
	Step                      // clock step; A=signed step in ns
	Slow                      // node turns slow; A=extra callback delay in ns
	SlowEnd                   // node back to normal speed
	Busy                      // the running callback charged work; A=its cost in true ns (world.Charger)
	numKinds
)

// Drop and close reasons (field A of Drop, B of Close).
const (
	ReasonLoss      = 1  // the link model lost it
	ReasonQueue     = 2  // the link's queue was full
	ReasonPartition = 3  // sender and receiver are in different partition groups
	ReasonLinkDown  = 4  // the directed link is down (flap)
	ReasonNodeDown  = 5  // the receiving node is crashed or restarted since
	ReasonNoSocket  = 6  // nothing listens on the destination port
	ReasonChecksum  = 7  // corrupted on the link, dropped by the receiver's checksum
	ReasonPeer      = 8  // the peer closed the stream
	ReasonBroken    = 9  // the connection broke (partition, link down, crash)
	ReasonRefused   = 10 // nothing listens on the dialed port

	// NumReasons bounds the reason values: 0 < reason < NumReasons.
	NumReasons = 11
)

var kindInfo = [numKinds]struct {
	name    string
	peer    string
	a, b, c string
}{
	Boot:      {"boot", "", "inc", "", ""},
	Crash:     {"crash", "", "inc", "", ""},
	Timer:     {"timer", "", "id", "", ""},
	Send:      {"send", "to", "ports", "len", "tx"},
	Recv:      {"recv", "from", "ports", "len", "rx"},
	Drop:      {"drop", "to", "why", "len", ""},
	Dial:      {"dial", "to", "sid", "port", ""},
	Open:      {"open", "peer", "sid", "", ""},
	Msg:       {"msg", "from", "sid", "len", ""},
	Close:     {"close", "peer", "sid", "why", ""},
	Partition: {"partition", "", "groups", "", ""},
	Heal:      {"heal", "", "", "", ""},
	LinkDown:  {"linkdown", "to", "", "", ""},
	LinkUp:    {"linkup", "to", "", "", ""},
	Step:      {"step", "", "by", "", ""},
	Slow:      {"slow", "", "extra", "", ""},
	SlowEnd:   {"slowend", "", "", "", ""},
	Busy:      {"busy", "", "ns", "", ""},
}

var reasonNames = [...]string{
	ReasonLoss: "loss", ReasonQueue: "queue", ReasonPartition: "partition",
	ReasonLinkDown: "linkdown", ReasonNodeDown: "nodedown", ReasonNoSocket: "nosocket",
	ReasonChecksum: "checksum", ReasonPeer: "peer", ReasonBroken: "broken", ReasonRefused: "refused",
}

// ReasonName returns the name of a drop or close reason as it appears in
// the log.
func ReasonName(why int64) string {
	if why > 0 && int(why) < len(reasonNames) && reasonNames[why] != "" {
		return reasonNames[why]
	}
	return "reason" + strconv.FormatInt(why, 10)
}

// String returns the kind's name as it appears in the log.
func (k Kind) String() string {
	if k == 0 || k >= numKinds {
		return "kind" + strconv.Itoa(int(k))
	}
	return kindInfo[k].name
}

// Record is one event. Which of Peer, A, B and C mean something depends on
// Kind (see the constants); unused fields are zero.
type Record struct {
	T    int64 // virtual true time, ns
	Node int32 // the node the event happened on, -1 for none
	Kind Kind
	Peer int32
	A    int64
	B    int64
	C    int64
}

// Ports packs a source and destination port into a Record field.
func Ports(src, dst uint16) int64 { return int64(src)<<16 | int64(dst) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// CheckpointEvery is how many events lie between two checkpoints.
const CheckpointEvery = 1024

// Log folds records into a running hash, keeps a checkpoint of the hash
// every CheckpointEvery events, and writes lines if given a writer.
//
// The hash is FNV-1a taken a 64-bit word at a time rather than a byte at
// a time: each of a record's seven fields is XORed in whole and the state
// multiplied by the FNV prime, and the record ends with a shift that
// folds the state's high bits into its low ones (the multiplication
// carries low bits up only). Every step is a bijection of the state, so
// two logs that differ in one record always end with different hashes.
// It costs 7 multiplications a record where the byte-wise form cost 56
// (12 % of a simulation's CPU; issue 34).
type Log struct {
	hash  uint64
	count uint64
	ckpt  []uint64
	w     *bufio.Writer
	buf   []byte
	err   error
}

// New returns a log. If w is not nil, every record is also written to it as
// one line; call Flush at the end.
func New(w io.Writer) *Log {
	l := &Log{hash: fnvOffset}
	if w != nil {
		l.w = bufio.NewWriterSize(w, 64<<10)
		l.buf = make([]byte, 0, 128)
	}
	return l
}

// Add appends one record.
func (l *Log) Add(r Record) {
	l.hash = fold(l.hash, r)
	l.count++
	if l.count%CheckpointEvery == 0 {
		l.ckpt = append(l.ckpt, l.hash)
	}
	if l.w != nil && l.err == nil {
		l.buf = AppendLine(l.buf[:0], l.count, r)
		l.buf = append(l.buf, '\n')
		_, l.err = l.w.Write(l.buf)
	}
}

// fold is the hash state h after record r.
func fold(h uint64, r Record) uint64 {
	h = (h ^ uint64(r.T)) * fnvPrime
	h = (h ^ uint64(uint32(r.Node))) * fnvPrime
	h = (h ^ uint64(r.Kind)) * fnvPrime
	h = (h ^ uint64(uint32(r.Peer))) * fnvPrime
	h = (h ^ uint64(r.A)) * fnvPrime
	h = (h ^ uint64(r.B)) * fnvPrime
	h = (h ^ uint64(r.C)) * fnvPrime
	return h ^ h>>29
}

// Hash returns the running hash over every record so far.
func (l *Log) Hash() uint64 { return l.hash }

// Count returns the number of records so far.
func (l *Log) Count() uint64 { return l.count }

// Checkpoints returns the hash after every CheckpointEvery-th record.
func (l *Log) Checkpoints() []uint64 { return l.ckpt }

// Flush writes buffered lines and returns the first write error.
func (l *Log) Flush() error {
	if l.w == nil {
		return nil
	}
	if l.err != nil {
		return fmt.Errorf("write event log: %w", l.err)
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("write event log: %w", err)
	}
	return nil
}

// AppendLine appends the text form of the seq-th record (1-based) to b:
//
//	<seq> <t_ns> <kind> n=<node> [<peer-label>=<peer>] [<label>=<value>]...
func AppendLine(b []byte, seq uint64, r Record) []byte {
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, r.T, 10)
	b = append(b, ' ')
	b = append(b, r.Kind.String()...)
	b = append(b, " n="...)
	b = strconv.AppendInt(b, int64(r.Node), 10)
	if r.Kind == 0 || r.Kind >= numKinds {
		return fmt.Appendf(b, " peer=%d a=%d b=%d c=%d", r.Peer, r.A, r.B, r.C)
	}
	info := kindInfo[r.Kind]
	if info.peer != "" {
		b = append(b, ' ')
		b = append(b, info.peer...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(r.Peer), 10)
	}
	for i, label := range [3]string{info.a, info.b, info.c} {
		if label == "" {
			continue
		}
		v := [3]int64{r.A, r.B, r.C}[i]
		b = append(b, ' ')
		b = append(b, label...)
		b = append(b, '=')
		switch {
		case label == "ports":
			b = strconv.AppendInt(b, v>>16, 10)
			b = append(b, '>')
			b = strconv.AppendInt(b, v&0xffff, 10)
		case label == "why":
			b = append(b, ReasonName(v)...)
		default:
			b = strconv.AppendInt(b, v, 10)
		}
	}
	return b
}

// Legend returns the documentation of every kind and its fields.
func Legend() string {
	var b strings.Builder
	b.WriteString("line: <seq> <t_ns> <kind> n=<node> [fields]\n")
	for k := Kind(1); k < numKinds; k++ {
		info := kindInfo[k]
		fmt.Fprintf(&b, "%-9s", info.name)
		for _, f := range []string{info.peer, info.a, info.b, info.c} {
			if f != "" {
				fmt.Fprintf(&b, " %s=", f)
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("why: ")
	for _, n := range reasonNames {
		if n != "" {
			fmt.Fprintf(&b, "%s ", n)
		}
	}
	b.WriteByte('\n')
	return b.String()
}
