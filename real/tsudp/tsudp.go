// Package tsudp provides UDP sockets whose send and receive times come from
// the Linux kernel's software timestamps (SO_TIMESTAMPING), falling back to a
// CLOCK_REALTIME reading in user space when the kernel gives none.
//
// Receive timestamps arrive with each datagram as an SCM_TIMESTAMPING control
// message. Transmit timestamps are read back from the socket's error queue
// and matched to their datagram by the SOF_TIMESTAMPING_OPT_ID counter; Send
// waits for one at most a couple of milliseconds.
//
// The kernel takes the software transmit timestamp in the device driver,
// after the egress qdisc: time a datagram spends in a shaping or delaying
// qdisc is part of it, and a datagram held back longer than Send waits gets
// the user-space stamp instead. And when the first socket on a machine asks
// for receive timestamps, the kernel turns them on asynchronously: datagrams
// received in the first moments may have none (SourceUser).
package tsudp

import "fmt"

// Source says where a timestamp came from.
type Source uint8

const (
	// SourceKernel is a kernel software timestamp (SO_TIMESTAMPING).
	SourceKernel Source = iota + 1
	// SourceUser is the fallback: CLOCK_REALTIME read in user space, just
	// before sendmsg or just after recvmsg.
	SourceUser
)

// String returns "kernel" or "user".
func (s Source) String() string {
	switch s {
	case SourceKernel:
		return "kernel"
	case SourceUser:
		return "user"
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// Stamp is a timestamp in CLOCK_REALTIME nanoseconds and its source.
type Stamp struct {
	Time   int64
	Source Source
}

// Stats counts a Conn's timestamps by source.
type Stats struct {
	// TxKernel and TxUser count the stamps Send returned.
	TxKernel, TxUser uint64
	// RxKernel and RxUser count the stamps Recv returned.
	RxKernel, RxUser uint64
	// TxLate counts kernel transmit timestamps that arrived after Send had
	// given up waiting for them; they were discarded.
	TxLate uint64
}
