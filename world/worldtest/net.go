package worldtest

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
)

const port = 9000

func testDatagramEcho(t *testing.T, w World) {
	r := newRecorder()
	const pings = 20
	w.Run(t, 2, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			var conn world.PacketConn
			sent := map[uint8]world.Time{}
			handle := func(p world.Packet) {
				if now := env.Host().Now(); p.RxTime > now {
					r.errorf(t, "node %d: RxTime %d is after the clock's reading %d in the callback", id, p.RxTime, now)
				}
				if p.To != conn.LocalAddr() {
					r.errorf(t, "node %d: packet To = %v, want %v", id, p.To, conn.LocalAddr())
				}
				if id == 1 {
					// Echo it back.
					if _, err := conn.Send(p.From, p.Data); err != nil {
						r.errorf(t, "echo: %v", err)
					}
					return
				}
				if p.From != (world.Addr{Node: 1, Port: port}) || len(p.Data) != 100 {
					r.errorf(t, "echo from %v with %d bytes, want n1:%d with 100", p.From, len(p.Data), port)
				}
				t1, ok := sent[p.Data[0]]
				if !ok {
					r.errorf(t, "echo of unknown ping %d", p.Data[0])
					return
				}
				r.add("rtt", int64(p.RxTime.Sub(t1)))
				if len(r.get("rtt")) == pings {
					r.done()
				}
			}
			c, err := env.ListenPacket(port, handle)
			if err != nil {
				return err
			}
			conn = c
			if _, err := env.ListenPacket(port, handle); err == nil {
				r.errorf(t, "second ListenPacket on port %d succeeded", port)
			}
			if id == 0 {
				for i := range pings {
					env.AfterFunc(time.Duration(i)*time.Millisecond, func() {
						data := bytes.Repeat([]byte{byte(i)}, 100)
						tx, err := conn.Send(world.Addr{Node: 1, Port: port}, data)
						if err != nil {
							r.errorf(t, "send: %v", err)
						}
						sent[byte(i)] = tx
					})
				}
			}
			return nil
		})
	}, r.doneAfter(1), limit)
	rtts := r.get("rtt")
	if len(rtts) != pings {
		t.Fatalf("%d of %d pings echoed over a reliable link", len(rtts), pings)
	}
	for _, rtt := range rtts {
		if rtt <= 0 || time.Duration(rtt) > time.Second {
			t.Errorf("round trip %v: want > 0 and < 1s", time.Duration(rtt))
		}
	}
}

func testDatagramToClosedPort(t *testing.T, w World) {
	r := newRecorder()
	w.Run(t, 2, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			c, err := env.ListenPacket(port, func(p world.Packet) { r.add(fmt.Sprintf("got%d", id), 1) })
			if err != nil {
				return err
			}
			if id == 1 {
				if err := c.Close(); err != nil {
					r.errorf(t, "close: %v", err)
				}
				if _, err := c.Send(world.Addr{Node: 0, Port: port}, []byte("x")); err == nil {
					r.errorf(t, "Send on a closed endpoint succeeded")
				}
				return nil
			}
			env.AfterFunc(10*time.Millisecond, func() {
				if _, err := c.Send(world.Addr{Node: 1, Port: port}, []byte("to nobody")); err != nil {
					r.errorf(t, "send: %v", err)
				}
			})
			env.AfterFunc(200*time.Millisecond, r.done)
			return nil
		})
	}, r.doneAfter(1), limit)
	if len(r.get("got1")) != 0 {
		t.Error("a closed endpoint received a datagram")
	}
}

// streamProg is a StreamHandler that records what it sees.
type streamProg struct {
	t      *testing.T
	r      *recorder
	id     world.NodeID
	onOpen func(world.Stream)
	onMsg  func(world.Stream, []byte)
	closed atomic.Int32
}

func (p *streamProg) OnOpen(s world.Stream) {
	p.r.add(fmt.Sprintf("open%d", p.id), 1)
	if p.onOpen != nil {
		p.onOpen(s)
	}
}

func (p *streamProg) OnMessage(s world.Stream, msg []byte) {
	if p.onMsg != nil {
		p.onMsg(s, msg)
	}
}

func (p *streamProg) OnClose(s world.Stream, err error) {
	p.closed.Add(1)
	if err != nil {
		p.r.add(fmt.Sprintf("closeerr%d", p.id), 1)
	} else {
		p.r.add(fmt.Sprintf("closenil%d", p.id), 1)
	}
	p.r.done()
}

func testStreamOrdered(t *testing.T, w World) {
	r := newRecorder()
	const msgs = 100
	w.Run(t, 2, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			p := &streamProg{t: t, r: r, id: id}
			if id == 1 {
				next := 0
				p.onMsg = func(s world.Stream, msg []byte) {
					want := fmt.Sprintf("message %d %s", next, bytes.Repeat([]byte("x"), next*37))
					if string(msg) != want {
						r.errorf(t, "message %d: got %d bytes %.20q, want %.20q", next, len(msg), msg, want)
					}
					next++
					if next == msgs {
						r.add("received", int64(next))
						if err := s.Close(); err != nil {
							r.errorf(t, "close: %v", err)
						}
					}
				}
				_, err := env.Listen(port, p)
				return err
			}
			p.onOpen = func(s world.Stream) {
				if s.RemoteAddr() != (world.Addr{Node: 1, Port: port}) {
					r.errorf(t, "dialer's RemoteAddr = %v", s.RemoteAddr())
				}
				for i := range msgs {
					if err := s.Send([]byte(fmt.Sprintf("message %d %s", i, bytes.Repeat([]byte("x"), i*37)))); err != nil {
						r.errorf(t, "send %d: %v", i, err)
					}
				}
			}
			env.AfterFunc(time.Millisecond, func() {
				if _, err := env.Dial(world.Addr{Node: 1, Port: port}, p); err != nil {
					r.errorf(t, "dial: %v", err)
				}
			})
			return nil
		})
	}, r.doneAfter(1), limit)
	if got := r.get("received"); len(got) != 1 || got[0] != msgs {
		t.Fatalf("listener received %v messages, want %d", got, msgs)
	}
	if len(r.get("open0")) != 1 || len(r.get("open1")) != 1 {
		t.Errorf("OnOpen ran %d times on the dialer and %d on the listener, want 1 and 1", len(r.get("open0")), len(r.get("open1")))
	}
	if len(r.get("closenil0")) != 1 {
		t.Errorf("dialer did not see a clean close (nil error) after the listener closed")
	}
}

func testStreamRefused(t *testing.T, w World) {
	r := newRecorder()
	w.Run(t, 2, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			if id == 1 {
				return nil
			}
			p := &streamProg{t: t, r: r, id: id}
			_, err := env.Dial(world.Addr{Node: 1, Port: port + 1}, p)
			return err
		})
	}, r.doneAfter(1), limit)
	if len(r.get("closeerr0")) != 1 || len(r.get("open0")) != 0 {
		t.Fatalf("dial to a port without listener: want one OnClose with an error and no OnOpen")
	}
}

func testStreamLimits(t *testing.T, w World) {
	r := newRecorder()
	w.Run(t, 2, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			p := &streamProg{t: t, r: r, id: id}
			if id == 1 {
				_, err := env.Listen(port, p)
				return err
			}
			p.onOpen = func(s world.Stream) {
				if err := s.Send(make([]byte, world.MaxMessageSize+1)); err == nil {
					r.errorf(t, "an oversized message was accepted")
				}
				if err := s.Close(); err != nil {
					r.errorf(t, "close: %v", err)
				}
				if err := s.Send([]byte("late")); err == nil {
					r.errorf(t, "Send after Close succeeded")
				}
				r.done()
			}
			st, err := env.Dial(world.Addr{Node: 1, Port: port}, p)
			// Nothing sent before OnOpen may overtake what OnOpen sends
			// (a hello): such a send fails, in every world.
			if err == nil && st.Send([]byte("early")) == nil {
				r.errorf(t, "Send before OnOpen succeeded")
			}
			return err
		})
	}, r.doneAfter(2), limit)
	if len(r.get("closenil1")) != 1 {
		t.Errorf("listener did not see the dialer's close")
	}
}

func testOneCallbackAtATime(t *testing.T, w World) {
	r := newRecorder()
	const n = 3
	var busy [n]atomic.Int32
	w.Run(t, n, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			enter := func() func() {
				if busy[id].Add(1) != 1 {
					r.errorf(t, "node %d: two callbacks at once", id)
				}
				return func() { busy[id].Add(-1) }
			}
			count := 0
			c, err := env.ListenPacket(port, func(world.Packet) {
				defer enter()()
				count++
				if count == 50*(n-1) {
					r.done()
				}
			})
			if err != nil {
				return err
			}
			for i := range 50 {
				env.AfterFunc(time.Duration(i)*100*time.Microsecond, func() {
					defer enter()()
					for j := range n {
						if world.NodeID(j) != id {
							_, _ = c.Send(world.Addr{Node: world.NodeID(j), Port: port}, []byte{1})
						}
					}
				})
			}
			return nil
		})
	}, r.doneAfter(n), limit)
	if !r.doneAfter(n)() {
		t.Fatal("not every node received every datagram over reliable links")
	}
}
