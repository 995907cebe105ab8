package real

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/world"
)

// dialTimeout bounds a stream dial.
const dialTimeout = 5 * time.Second

// listener accepts TCP connections and posts each as a stream's OnOpen.
type listener struct {
	n    *node
	addr world.Addr
	ln   net.Listener
	once sync.Once
}

func (n *node) Listen(port uint16, h world.StreamHandler) (world.Listener, error) {
	laddr, err := n.w.addrOf(world.Addr{Node: n.id, Port: port})
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	err = n.enter(func() error {
		var err error
		ln, err = net.Listen("tcp", laddr.String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node %d: listen tcp port %d: %w", n.id, port, err)
	}
	l := &listener{n: n, addr: world.Addr{Node: n.id, Port: port}, ln: ln}
	n.track(l)
	go l.accept(h)
	return l, nil
}

func (l *listener) accept(h world.StreamHandler) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				l.n.log.Warn("stream accept failed", "port", l.addr.Port, "err", err)
			}
			return
		}
		remote, ok := l.n.w.worldAddr(netip.MustParseAddrPort(c.RemoteAddr().String()))
		if !ok {
			if l.n.w.notNodeStreams.Add(1) == 1 {
				l.n.log.Warn("stream from an address that is no node's: refused (further ones are only counted)", "from", c.RemoteAddr().String())
			}
			c.Close()
			continue
		}
		s := newStream(l.n, l.addr, remote, h)
		if l.n.w.cfg.Key != nil {
			go s.connected(c, false) // the handshake must not hold up Accept
		} else {
			s.connected(c, false)
		}
	}
}

func (l *listener) Addr() world.Addr { return l.addr }

func (l *listener) Close() error {
	var err error
	l.once.Do(func() { err = l.ln.Close() })
	return err
}

// stream is one end of a TCP connection carrying length-prefixed messages.
// Sends go through a queue drained by a writer goroutine, so Send never
// blocks the node's loop. Its fields under mu are shared with the reader
// and writer goroutines; everything a handler sees runs on the loop.
type stream struct {
	n      *node
	local  world.Addr
	remote world.Addr
	h      world.StreamHandler

	mu     sync.Mutex
	conn   net.Conn // nil while dialing
	queue  [][]byte
	wake   chan struct{}
	closed bool // closed locally: no more callbacks, sends fail
	ended  bool // OnClose posted (or closed locally)
	// open is set on the loop just before OnOpen: a send before it fails,
	// as the simulator's does, so that nothing a handler sends while its
	// dial is pending (a heartbeat) can reach the peer before what it
	// sends in OnOpen (a hello).
	open bool
}

func newStream(n *node, local, remote world.Addr, h world.StreamHandler) *stream {
	s := &stream{n: n, local: local, remote: remote, h: h, wake: make(chan struct{}, 1)}
	n.track(closerFunc(s.abort))
	return s
}

func (n *node) Dial(to world.Addr, h world.StreamHandler) (world.Stream, error) {
	raddr, err := n.w.addrOf(to)
	if err != nil {
		return nil, err
	}
	s := newStream(n, world.Addr{Node: n.id}, to, h)
	// The dial starts from the loop, so that a dial made in Start reaches
	// nodes that boot after this one (loops run once every node started).
	n.lp().post(func() { go s.dial(raddr, to) })
	return s, nil
}

func (s *stream) dial(raddr netip.AddrPort, to world.Addr) {
	var c net.Conn
	err := s.n.enter(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		// Bind to the node's own address: on loopback the kernel would
		// otherwise pick 127.0.0.1, which is no node's.
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(s.n.cfg.Addr, 0))}
		var err error
		c, err = d.DialContext(ctx, "tcp", raddr.String())
		return err
	})
	if err != nil {
		s.end(fmt.Errorf("dial %v: %w", to, err))
		return
	}
	if la, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
		s.mu.Lock()
		s.local.Port = la.Port()
		s.mu.Unlock()
	}
	s.connected(c, true)
}

// connected starts the stream's reader and writer and posts OnOpen; in a
// keyed world after the handshake, which a dialer's handler hears of if it
// fails and an acceptor's does not (the stream was never open).
func (s *stream) connected(c net.Conn, dialer bool) {
	var a *streamAuth
	if s.n.w.cfg.Key != nil {
		var err error
		if a, err = s.handshake(c, dialer); err != nil {
			c.Close()
			if dialer {
				s.end(err)
			} else {
				s.Close()
				s.n.log.Info("stream closed before its handshake ended", "from", s.remote.String(), "err", err)
			}
			return
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.conn = c
	s.mu.Unlock()
	s.n.lp().post(func() {
		s.mu.Lock()
		closed := s.closed
		s.open = true
		s.mu.Unlock()
		if !closed {
			s.h.OnOpen(s)
		}
	})
	go s.write(c, a)
	go s.read(c, a)
}

func (s *stream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *stream) read(c net.Conn, a *streamAuth) {
	r := bufio.NewReaderSize(c, 64<<10)
	limit := world.MaxMessageSize
	if a != nil {
		limit += auth.Overhead
	}
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			s.end(err)
			return
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size > uint32(limit) {
			s.end(fmt.Errorf("stream from %v: message of %d bytes over the %d limit", s.remote, size, limit))
			return
		}
		msg, err := readMessage(r, int(size))
		if err != nil {
			s.end(fmt.Errorf("stream from %v: message cut short: %w", s.remote, err))
			return
		}
		if a != nil {
			if msg, err = a.open(s.remote.Node, msg); err != nil {
				s.n.refused(true, s.remote, err)
				s.end(fmt.Errorf("stream from %v: frame dropped: %w", s.remote, err))
				return
			}
		}
		// Waits while the loop holds its limit of callbacks from the
		// network: the peer's sends then wait on TCP's window.
		if !s.n.lp().postNet(func() {
			if !s.isClosed() {
				s.h.OnMessage(s, msg)
			}
		}, true) {
			return // the loop stopped
		}
	}
}

// readChunk is how much of a message readMessage allocates ahead of the
// bytes that arrived.
const readChunk = 64 << 10

// readMessage reads a message of size bytes from r, allocating as its
// bytes arrive rather than the size a peer declared up front: a peer that
// declares 16 MiB and sends 64 bytes costs 64 KiB, not 16 MiB.
func readMessage(r io.Reader, size int) ([]byte, error) {
	msg := make([]byte, 0, min(size, readChunk))
	for len(msg) < size {
		if len(msg) == cap(msg) {
			msg = slices.Grow(msg, min(size-len(msg), max(len(msg), readChunk)))
		}
		n := min(cap(msg), size)
		k, err := io.ReadFull(r, msg[len(msg):n])
		msg = msg[:len(msg)+k]
		if err != nil {
			return nil, err
		}
	}
	return msg, nil
}

func (s *stream) write(c net.Conn, a *streamAuth) {
	w := bufio.NewWriterSize(c, 64<<10)
	for {
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		closed, ended := s.closed, s.ended
		s.mu.Unlock()
		if ended && !closed {
			return // end closed the connection
		}
		for _, m := range q {
			if a != nil {
				m = a.sealer.Seal(make([]byte, 0, len(m)+auth.Overhead), m)
			}
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(m)))
			if _, err := w.Write(hdr[:]); err != nil {
				s.end(err)
				return
			}
			if _, err := w.Write(m); err != nil {
				s.end(err)
				return
			}
		}
		if err := w.Flush(); err != nil {
			s.end(err)
			return
		}
		if closed {
			c.Close()
			return
		}
		if len(q) == 0 {
			<-s.wake
		}
	}
}

// end reports the end of the stream to its handler once, unless it was
// closed locally.
func (s *stream) end(err error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
	s.signal()
	s.n.lp().post(func() {
		if !s.isClosed() {
			s.h.OnClose(s, err)
		}
	})
}

func (s *stream) LocalAddr() world.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local
}

func (s *stream) RemoteAddr() world.Addr { return s.remote }

func (s *stream) Send(msg []byte) error {
	if len(msg) > world.MaxMessageSize {
		return fmt.Errorf("stream to %v: message of %d bytes over the %d limit", s.remote, len(msg), world.MaxMessageSize)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ended {
		return fmt.Errorf("stream to %v: %w", s.remote, net.ErrClosed)
	}
	if !s.open {
		return fmt.Errorf("send on stream to %v: not connected yet", s.remote)
	}
	s.queue = append(s.queue, append([]byte(nil), msg...))
	s.signal()
	return nil
}

// Close closes the stream after the messages already queued are written.
func (s *stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.ended = true, true
	s.mu.Unlock()
	s.signal()
	return nil
}

// abort closes the stream at once, dropping what is queued (world
// shutdown).
func (s *stream) abort() error {
	s.Close()
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

func (s *stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
