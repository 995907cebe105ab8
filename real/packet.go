package real

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/chronosync/chronosync/real/tsudp"
	"github.com/chronosync/chronosync/world"
)

// TimestampStats count where datagram timestamps came from: the kernel's
// software timestamps, or the user-space fallback (see package tsudp).
type TimestampStats struct {
	TxKernel uint64 `json:"tx_kernel"`
	TxUser   uint64 `json:"tx_user"`
	RxKernel uint64 `json:"rx_kernel"`
	RxUser   uint64 `json:"rx_user"`
	TxLate   uint64 `json:"tx_late"`
}

func (s *TimestampStats) add(o tsudp.Stats) {
	s.TxKernel += o.TxKernel
	s.TxUser += o.TxUser
	s.RxKernel += o.RxKernel
	s.RxUser += o.RxUser
	s.TxLate += o.TxLate
}

// Source summarises the counts: "kernel" when every timestamp was the
// kernel's, "user" when none was, "mixed" otherwise, "" with none at all.
func (s TimestampStats) Source() string {
	kernel, user := s.TxKernel+s.RxKernel, s.TxUser+s.RxUser
	switch {
	case kernel+user == 0:
		return ""
	case user == 0:
		return "kernel"
	case kernel == 0:
		return "user"
	}
	return "mixed"
}

// addStats adds the node's datagram endpoints' counts to s.
func (n *node) addStats(s *TimestampStats) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.conns {
		s.add(c.sock.Stats())
	}
}

var _ world.SourcedSender = (*packetConn)(nil)

// packetConn is a datagram endpoint: a timestamping UDP socket whose reader
// goroutine posts every datagram to the node's loop.
type packetConn struct {
	n      *node
	addr   world.Addr
	sock   *tsudp.Conn
	closed atomic.Bool
}

func (n *node) ListenPacket(port uint16, h world.PacketHandler) (world.PacketConn, error) {
	laddr, err := n.w.addrOf(world.Addr{Node: n.id, Port: port})
	if err != nil {
		return nil, err
	}
	var sock *tsudp.Conn
	err = n.enter(func() error {
		var err error
		sock, err = tsudp.Listen(laddr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node %d: listen udp port %d: %w", n.id, port, err)
	}
	c := &packetConn{n: n, addr: world.Addr{Node: n.id, Port: port}, sock: sock}
	n.mu.Lock()
	n.conns = append(n.conns, c)
	n.closers = append(n.closers, c)
	n.mu.Unlock()
	go c.read(h)
	return c, nil
}

func (c *packetConn) read(h world.PacketHandler) {
	buf := make([]byte, 65536)
	for {
		size, from, rx, err := c.sock.Recv(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || c.closed.Load() {
				return
			}
			if c.n.w.readErrors.Add(1) == 1 {
				c.n.log.Warn("datagram read failed (further read errors are only counted)", "port", c.addr.Port, "err", err)
			}
			continue
		}
		src, ok := c.n.w.worldAddr(from)
		if !ok {
			// Traffic from outside the cluster, not a loss of ours:
			// counted apart (not_a_node), the first one logged.
			if c.n.w.notNode.Add(1) == 1 {
				c.n.log.Warn("datagram from an address that is no node's: dropped (further ones are only counted)", "from", from.String(), "port", c.addr.Port)
			}
			continue
		}
		data := append([]byte(nil), buf[:size]...)
		if k := c.n.keys; k != nil {
			if data, err = k.open(src.Node, data); err != nil {
				c.n.refused(false, src, err)
				continue
			}
		}
		rxTrue := c.n.w.base.fromRealtime(rx.Time)
		posted := c.n.lp().postNet(func() {
			if c.closed.Load() {
				return
			}
			h(world.Packet{From: src, To: c.addr, Data: data, RxTime: world.Time(c.n.clock.at(rxTrue))})
		}, false)
		if !posted && !c.closed.Load() {
			if c.n.w.backlogDrops.Add(1) == 1 {
				c.n.log.Warn("datagram dropped: the node's loop holds its limit of callbacks from the network", "limit", maxBacklog, "port", c.addr.Port)
			}
		}
	}
}

func (c *packetConn) LocalAddr() world.Addr { return c.addr }

func (c *packetConn) Send(to world.Addr, data []byte) (world.Time, error) {
	tx, _, err := c.SendSourced(to, data)
	return tx, err
}

// SendSourced is Send, also saying whether the transmit timestamp is the
// kernel's or tsudp's user-space fallback. It implements
// [world.SourcedSender].
func (c *packetConn) SendSourced(to world.Addr, data []byte) (world.Time, world.TxSource, error) {
	if c.closed.Load() {
		return 0, 0, fmt.Errorf("send to %v: %w", to, net.ErrClosed)
	}
	dst, err := c.n.w.addrOf(to)
	if err != nil {
		return 0, 0, err
	}
	if k := c.n.keys; k != nil {
		data = k.seal(to.Node, data)
	}
	tx, err := c.sock.Send(dst, data)
	if err != nil {
		return 0, 0, fmt.Errorf("send to %v: %w", to, err)
	}
	src := world.TxKernel
	if tx.Source != tsudp.SourceKernel {
		src = world.TxUser
	}
	return world.Time(c.n.clock.at(c.n.w.base.fromRealtime(tx.Time))), src, nil
}

func (c *packetConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.sock.Close()
}
