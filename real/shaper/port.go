//go:build linux

package shaper

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

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
	f      *os.File
	rc     syscall.RawConn
}

// htons converts a 16-bit value to network byte order.
func htons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenPacketPort opens an AF_PACKET (SOCK_RAW, ETH_P_ALL) socket bound to
// the interface ifname of the calling thread's namespace (call it from
// netlab's DoSwitch); the socket stays in that namespace. It ignores the
// frames it or any other socket sends on the interface
// (PACKET_IGNORE_OUTGOING), so the relay never reads its own writes.
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
	return &packetPort{ifname: ifname, f: f, rc: rc}, nil
}

// ReadFrame implements Port.
func (p *packetPort) ReadFrame(buf []byte) (int, error) {
	for {
		var n int
		var from unix.Sockaddr
		var rerr error
		err := p.rc.Read(func(fd uintptr) bool {
			n, from, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_TRUNC)
			return rerr != unix.EAGAIN
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			return 0, fmt.Errorf("shaper: read port %s: %w", p.ifname, err)
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue // belt and braces: PACKET_IGNORE_OUTGOING filters these
		}
		if n > len(buf) {
			return 0, fmt.Errorf("shaper: read port %s: %d-byte frame: %w", p.ifname, n, ErrFrameTooLarge)
		}
		return n, nil
	}
}

// WriteFrame implements Port.
func (p *packetPort) WriteFrame(b []byte) error {
	var werr error
	err := p.rc.Write(func(fd uintptr) bool {
		_, werr = unix.Write(int(fd), b)
		return werr != unix.EAGAIN
	})
	if err == nil {
		err = werr
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOBUFS):
		return fmt.Errorf("shaper: write port %s: %w: %w", p.ifname, ErrFrameDropped, err)
	default:
		return fmt.Errorf("shaper: write port %s: %w", p.ifname, err)
	}
}

// Close implements Port.
func (p *packetPort) Close() error { return p.f.Close() }
