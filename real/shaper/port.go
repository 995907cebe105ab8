//go:build linux

package shaper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Port is one switch port, that is one node: frames the node sent are
// read from it, frames for the node are written to it.
type Port interface {
	// ReadFrame reads one Ethernet frame into buf and returns its length.
	// A frame longer than buf is lost and reported as an error wrapping
	// ErrFrameTooLarge; the port stays usable.
	ReadFrame(buf []byte) (int, error)
	// WriteFrame writes one Ethernet frame. An error wrapping
	// ErrFrameDropped means the frame was lost (a full queue) but the
	// port stays usable; any other error means the port failed.
	WriteFrame(b []byte) error
	// Close closes the port and makes pending calls return.
	Close() error
}

// Errors a Port may wrap for a lost frame on a usable port.
var (
	ErrFrameTooLarge = errors.New("frame larger than the read buffer")
	ErrFrameDropped  = errors.New("frame dropped by the port")
)

// packetRcvBuf is the receive buffer asked for each packet socket, so that
// a burst waits in the kernel rather than being dropped before the relay
// reads it.
const packetRcvBuf = 4 << 20

// packetPort is a Port on an AF_PACKET socket.
type packetPort struct {
	ifname string
	fd     int // f's descriptor, for pollPort
	f      *os.File
	rc     syscall.RawConn

	// The scheduler's thread reads and writes the port with the raw
	// system calls, on this header, its one buffer vector and its
	// sender's address, so that relaying a frame allocates nothing
	// (unix.Recvmsg allocates the sender's address, os.File's raw
	// connection a closure): garbage makes the collector run, and a
	// collection stops the real-time thread (see the package doc).
	msg  unix.Msghdr
	iov  unix.Iovec
	from unix.RawSockaddrLinklayer
	// viaRuntime makes readStamped and writeNow use unix.Recvmsg and
	// WriteFrame, which allocate: the strategy of 2026-11-22, kept for
	// BenchmarkShaperLoad's comparison (see strategy).
	viaRuntime bool
}

// pollPort is a Port whose frames the scheduler's own thread reads (see
// the package doc): a packetPort.
type pollPort interface {
	Port
	// pollFD is the descriptor to poll for frames; it stays valid until
	// Close, which the shaper calls only when its scheduler has returned.
	pollFD() int
	// readStamped reads one frame without blocking, like ReadFrame, and
	// returns the kernel's receive stamp, in ns since the epoch
	// (CLOCK_REALTIME), or 0 when the frame has none. It returns
	// unix.EAGAIN when no frame is queued. One goroutine at a time, and
	// it allocates nothing.
	readStamped(buf, oob []byte) (n int, stamp int64, err error)
	// writeNow writes one frame without blocking, like WriteFrame, from
	// the goroutine that calls readStamped, and allocates nothing.
	writeNow(b []byte) error
}

var _ pollPort = (*packetPort)(nil)

// stampOOB is the size of the control buffer for readStamped: one
// SCM_TIMESTAMPNS message, with room to spare.
const stampOOB = 128

// htons converts a 16-bit value to network byte order.
func htons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenPacketPort opens an AF_PACKET (SOCK_RAW, ETH_P_ALL) socket bound to
// the interface ifname of the calling thread's namespace (call it from
// netlab's DoSwitch); the socket stays in that namespace. It ignores the
// frames it or any other socket sends on the interface
// (PACKET_IGNORE_OUTGOING), so the relay never reads its own writes, and
// it has the kernel stamp each frame's arrival (SO_TIMESTAMPNS), so that
// the relay dates a frame by when it arrived, not by when it was read.
func OpenPacketPort(ifname string) (Port, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("shaper: open packet port %s: %w", ifname, err)
	}
	// Protocol 0 until bind: no frame of another interface is queued.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("shaper: open packet port %s: %w", ifname, err)
	}
	setup := func() error {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
			return fmt.Errorf("PACKET_IGNORE_OUTGOING: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return fmt.Errorf("SO_TIMESTAMPNS: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, packetRcvBuf); err != nil {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, packetRcvBuf); err != nil {
				return fmt.Errorf("SO_RCVBUF: %w", err)
			}
		}
		sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}
		if err := unix.Bind(fd, sa); err != nil {
			return fmt.Errorf("bind: %w", err)
		}
		return nil
	}
	if err := setup(); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shaper: open packet port %s: %w", ifname, err)
	}
	f := os.NewFile(uintptr(fd), "packet:"+ifname)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("shaper: open packet port %s: %w", ifname, err)
	}
	return &packetPort{ifname: ifname, fd: fd, f: f, rc: rc}, nil
}

// ReadFrame implements Port.
func (p *packetPort) ReadFrame(buf []byte) (int, error) {
	var oob [stampOOB]byte
	var n int
	var rerr error
	err := p.rc.Read(func(fd uintptr) bool {
		n, _, rerr = p.recv(int(fd), buf, oob[:])
		return rerr != unix.EAGAIN
	})
	if err != nil {
		return 0, fmt.Errorf("shaper: read port %s: %w", p.ifname, err)
	}
	return n, rerr
}

// pollFD implements pollPort.
func (p *packetPort) pollFD() int { return p.fd }

// readStamped implements pollPort.
func (p *packetPort) readStamped(buf, oob []byte) (int, int64, error) {
	if p.viaRuntime {
		return p.recv(p.fd, buf, oob)
	}
	for {
		p.iov.Base = unsafe.SliceData(buf)
		p.iov.SetLen(len(buf))
		p.msg = unix.Msghdr{
			Name:    (*byte)(unsafe.Pointer(&p.from)),
			Namelen: uint32(unsafe.Sizeof(p.from)),
			Iov:     &p.iov,
		}
		p.msg.SetIovlen(1)
		if len(oob) > 0 {
			p.msg.Control = unsafe.SliceData(oob)
			p.msg.SetControllen(len(oob))
		}
		r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(p.fd), uintptr(unsafe.Pointer(&p.msg)), unix.MSG_TRUNC)
		switch {
		case errno == unix.EAGAIN:
			return 0, 0, unix.EAGAIN
		case errno == unix.EINTR:
			continue
		case errno != 0:
			return 0, 0, fmt.Errorf("shaper: read port %s: %w", p.ifname, errno)
		}
		if p.from.Pkttype == unix.PACKET_OUTGOING {
			continue // belt and braces: PACKET_IGNORE_OUTGOING filters these
		}
		n := int(r)
		if n > len(buf) {
			return 0, 0, fmt.Errorf("shaper: read port %s: %d-byte frame: %w", p.ifname, n, ErrFrameTooLarge)
		}
		var stamp int64
		if p.msg.Flags&unix.MSG_CTRUNC == 0 {
			stamp = parseStamp(oob[:p.msg.Controllen])
		}
		return n, stamp, nil
	}
}

// writeNow implements pollPort.
func (p *packetPort) writeNow(b []byte) error {
	if p.viaRuntime {
		return p.WriteFrame(b)
	}
	_, _, errno := unix.Syscall(unix.SYS_WRITE, uintptr(p.fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	switch errno {
	case 0:
		return nil
	case unix.ENOBUFS, unix.EAGAIN: // a full send buffer drops the frame, as a switch would
		return fmt.Errorf("shaper: write port %s: %w: %w", p.ifname, ErrFrameDropped, errno)
	default:
		return fmt.Errorf("shaper: write port %s: %w", p.ifname, errno)
	}
}

// recv reads one frame from fd, p's descriptor, without blocking; see
// readStamped.
func (p *packetPort) recv(fd int, buf, oob []byte) (int, int64, error) {
	for {
		n, oobn, flags, from, err := unix.Recvmsg(fd, buf, oob, unix.MSG_TRUNC)
		if err == unix.EAGAIN {
			return 0, 0, err
		}
		if err != nil {
			return 0, 0, fmt.Errorf("shaper: read port %s: %w", p.ifname, err)
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue // belt and braces: PACKET_IGNORE_OUTGOING filters these
		}
		if n > len(buf) {
			return 0, 0, fmt.Errorf("shaper: read port %s: %d-byte frame: %w", p.ifname, n, ErrFrameTooLarge)
		}
		var stamp int64
		if flags&unix.MSG_CTRUNC == 0 {
			stamp = parseStamp(oob[:oobn])
		}
		return n, stamp, nil
	}
}

// parseStamp returns the SCM_TIMESTAMPNS stamp in the control messages
// oob, in ns since the epoch, or 0 if there is none.
func parseStamp(oob []byte) int64 {
	for len(oob) > 0 {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			if unsafe.Sizeof(unix.Timespec{}) == 16 {
				return int64(binary.NativeEndian.Uint64(data[0:8]))*1e9 + int64(binary.NativeEndian.Uint64(data[8:16]))
			}
			return int64(int32(binary.NativeEndian.Uint32(data[0:4])))*1e9 + int64(int32(binary.NativeEndian.Uint32(data[4:8])))
		}
		oob = rest
	}
	return 0
}

// WriteFrame implements Port.
func (p *packetPort) WriteFrame(b []byte) error {
	var werr error
	err := p.rc.Write(func(fd uintptr) bool {
		_, werr = unix.Write(int(fd), b)
		return true // EAGAIN (a full send buffer) drops the frame, as a switch would
	})
	if err == nil {
		err = werr
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.EAGAIN):
		return fmt.Errorf("shaper: write port %s: %w: %w", p.ifname, ErrFrameDropped, err)
	default:
		return fmt.Errorf("shaper: write port %s: %w", p.ifname, err)
	}
}

// Close implements Port.
func (p *packetPort) Close() error { return p.f.Close() }
