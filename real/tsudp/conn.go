package tsudp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tsFlags asks for software receive and transmit timestamps, transmit ones
// numbered per datagram and returned without the datagram itself.
const tsFlags = unix.SOF_TIMESTAMPING_RX_SOFTWARE | unix.SOF_TIMESTAMPING_TX_SOFTWARE |
	unix.SOF_TIMESTAMPING_SOFTWARE | unix.SOF_TIMESTAMPING_OPT_ID | unix.SOF_TIMESTAMPING_OPT_TSONLY

// txWait bounds how long Send waits for the kernel's transmit timestamp.
const txWait = 2 * time.Millisecond

// oobSize fits SCM_TIMESTAMPING plus IP_RECVERR / IPV6_RECVERR with its
// offender address, with room to spare.
const oobSize = 256

// Conn is a UDP socket with kernel software timestamps. Its methods may be
// called from several goroutines at once, typically one receiving and one
// sending; concurrent Sends take turns, as do concurrent Recvs.
type Conn struct {
	uc    *net.UDPConn
	rc    syscall.RawConn
	laddr netip.AddrPort

	// smu serialises Send, which owns the OPT_ID counter and the error
	// queue buffers.
	smu    sync.Mutex
	nextID uint32 // the OPT_ID the kernel gives the next datagram sent
	eqData [1]byte
	eqOOB  [oobSize]byte

	rmu  sync.Mutex // guards roob
	roob [oobSize]byte

	txKernel, txUser, rxKernel, rxUser, txLate atomic.Uint64
}

// Listen opens a UDP socket bound to laddr and enables SO_TIMESTAMPING with
// software receive and transmit timestamps. The socket is created in the
// network namespace of the calling OS thread: a caller that needs another
// namespace locks its goroutine to the thread and enters it first. laddr may
// be IPv4 or IPv6; port 0 picks an ephemeral port.
func Listen(laddr netip.AddrPort) (*Conn, error) {
	if !laddr.IsValid() {
		return nil, fmt.Errorf("tsudp: listen %s: invalid address", laddr)
	}
	network := "udp6"
	if laddr.Addr().Is4() {
		network = "udp4"
	}
	uc, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(laddr))
	if err != nil {
		return nil, fmt.Errorf("tsudp: listen %s: %w", laddr, err)
	}
	c, err := newConn(uc)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("tsudp: listen %s: %w", laddr, err)
	}
	return c, nil
}

func newConn(uc *net.UDPConn) (*Conn, error) {
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPING, tsFlags)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("setsockopt SO_TIMESTAMPING: %w", serr)
	}
	la := uc.LocalAddr().(*net.UDPAddr).AddrPort()
	return &Conn{uc: uc, rc: rc, laddr: unmap(la)}, nil
}

// LocalAddr returns the address the socket is bound to.
func (c *Conn) LocalAddr() netip.AddrPort { return c.laddr }

// Send sends b as one datagram to to and returns its transmit timestamp: the
// kernel's software timestamp when it comes back within about 2 ms (or
// before Send first looks for it), otherwise the CLOCK_REALTIME reading
// taken just before sendmsg, with SourceUser. Kernel stamps that arrive
// later are discarded by a later Send and counted in Stats.TxLate.
func (c *Conn) Send(to netip.AddrPort, b []byte) (Stamp, error) {
	c.smu.Lock()
	defer c.smu.Unlock()
	before := time.Now().UnixNano()
	if _, _, err := c.uc.WriteMsgUDPAddrPort(b, nil, to); err != nil {
		return Stamp{}, fmt.Errorf("tsudp: send to %s: %w", to, err)
	}
	want := c.nextID
	c.nextID++
	if id, t, ok := c.txStamp(want, before); ok {
		c.nextID = id + 1
		c.txKernel.Add(1)
		return Stamp{Time: t, Source: SourceKernel}, nil
	}
	c.txUser.Add(1)
	return Stamp{Time: before, Source: SourceUser}, nil
}

// txStamp waits up to txWait for the transmit timestamp of the datagram just
// sent, whose OPT_ID is want and which was sent no earlier than sent.
func (c *Conn) txStamp(want uint32, sent int64) (id uint32, t int64, ok bool) {
	deadline := time.Now().Add(txWait)
	if err := c.rc.Control(func(fd uintptr) {
		id, t, ok = c.awaitTx(int(fd), want, sent, deadline)
	}); err != nil {
		return 0, 0, false
	}
	return id, t, ok
}

// awaitTx polls fd for its error queue until deadline, reading it whenever
// it is non-empty, until the wanted timestamp turns up. It looks at the
// queue at least once, even past the deadline: on a busy machine the
// sending thread can be descheduled for longer than txWait between sendmsg
// and the first poll, while the kernel queued the stamp microseconds after
// the send (on loopback, before sendmsg returned).
func (c *Conn) awaitTx(fd int, want uint32, sent int64, deadline time.Time) (uint32, int64, bool) {
	pfd := []unix.PollFd{{Fd: int32(fd)}} // events 0: POLLERR is always reported
	for {
		left := max(time.Until(deadline), 0) // 0: a poll that does not wait
		timeout := unix.NsecToTimespec(left.Nanoseconds())
		n, err := unix.Ppoll(pfd, &timeout, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 || pfd[0].Revents&unix.POLLERR == 0 {
			return 0, 0, false
		}
		read, id, t, ok := c.drainErrQueue(fd, want, sent)
		if ok {
			return id, t, true
		}
		if read == 0 {
			// POLLERR with an empty queue is a pending socket error;
			// polling again would spin.
			return 0, 0, false
		}
	}
}

// drainErrQueue reads fd's error queue until it is empty or holds the wanted
// transmit timestamp, discarding the stamps of earlier datagrams. A stamp is
// the wanted one when its OPT_ID is want or later (a send that failed inside
// the kernel may have used up an ID) and it is not older than sent.
func (c *Conn) drainErrQueue(fd int, want uint32, sent int64) (read int, id uint32, t int64, ok bool) {
	for {
		_, oobn, _, _, err := unix.Recvmsg(fd, c.eqData[:], c.eqOOB[:], unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return read, 0, 0, false
		}
		read++
		m, err := parseCmsgs(c.eqOOB[:oobn])
		if err != nil || !m.hasStamp || !m.hasTxID {
			continue
		}
		if int32(m.txID-want) >= 0 && m.stamp >= sent {
			return read, m.txID, m.stamp, true
		}
		c.txLate.Add(1)
	}
}

// Recv blocks until a datagram arrives, copies it into buf (truncating it to
// len(buf)) and returns its length, its source address (IPv4-mapped IPv6
// addresses unmapped) and its receive timestamp: the kernel's software
// timestamp, or with SourceUser a CLOCK_REALTIME reading taken just after
// recvmsg when the kernel gave none. After Close, Recv returns an error
// satisfying errors.Is(err, net.ErrClosed).
func (c *Conn) Recv(buf []byte) (n int, from netip.AddrPort, rx Stamp, err error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	n, oobn, _, from, err := c.uc.ReadMsgUDPAddrPort(buf, c.roob[:])
	now := time.Now().UnixNano()
	if err != nil {
		return 0, netip.AddrPort{}, Stamp{}, fmt.Errorf("tsudp: recv on %s: %w", c.laddr, err)
	}
	from = unmap(from)
	if m, err := parseCmsgs(c.roob[:oobn]); err == nil && m.hasStamp {
		c.rxKernel.Add(1)
		return n, from, Stamp{Time: m.stamp, Source: SourceKernel}, nil
	}
	c.rxUser.Add(1)
	return n, from, Stamp{Time: now, Source: SourceUser}, nil
}

// Stats returns the counts of timestamps by source so far.
func (c *Conn) Stats() Stats {
	return Stats{
		TxKernel: c.txKernel.Load(),
		TxUser:   c.txUser.Load(),
		RxKernel: c.rxKernel.Load(),
		RxUser:   c.rxUser.Load(),
		TxLate:   c.txLate.Load(),
	}
}

// Close closes the socket; a Recv blocked on it returns.
func (c *Conn) Close() error {
	if err := c.uc.Close(); err != nil {
		return fmt.Errorf("tsudp: close %s: %w", c.laddr, err)
	}
	return nil
}

func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
