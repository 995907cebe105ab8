package tsudp

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// listen opens a Conn on an ephemeral port of addr, closed at the end of the test.
func listen(t *testing.T, addr string) *Conn {
	t.Helper()
	c, err := Listen(netip.AddrPortFrom(netip.MustParseAddr(addr), 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// needIPv6 skips the test on a machine without an IPv6 loopback.
func needIPv6(t *testing.T) {
	t.Helper()
	c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	c.Close()
}

func TestSendRecv(t *testing.T) {
	const n = 200
	for _, addr := range []string{"127.0.0.1", "::1"} {
		t.Run(addr, func(t *testing.T) {
			if addr == "::1" {
				needIPv6(t)
			}
			a, b := listen(t, addr), listen(t, addr)
			buf := make([]byte, 2048)
			lat := make([]time.Duration, 0, n)
			for i := range n {
				payload := fmt.Appendf(nil, "datagram %d %s", i, bytes.Repeat([]byte{byte(i)}, i))
				before := time.Now().UnixNano()
				tx, err := a.Send(b.LocalAddr(), payload)
				if err != nil {
					t.Fatal(err)
				}
				size, from, rx, err := b.Recv(buf)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf[:size], payload) {
					t.Fatalf("datagram %d: received %q, want %q", i, buf[:size], payload)
				}
				if from != a.LocalAddr() {
					t.Fatalf("datagram %d: from %s, want %s", i, from, a.LocalAddr())
				}
				if tx.Source != SourceKernel || rx.Source != SourceKernel {
					t.Fatalf("datagram %d: tx stamp from %s, rx stamp from %s; want kernel", i, tx.Source, rx.Source)
				}
				if tx.Time < before {
					t.Errorf("datagram %d: tx %d before the clock read before Send %d", i, tx.Time, before)
				}
				// On the loopback both stamps are taken inside the
				// sender's sendmsg, with bottom halves off (the driver's
				// transmit, then netif_rx), so no scheduling delay falls
				// between them: microseconds even beside CPU hogs, and
				// 10 ms only bounds a gross mistake.
				d := time.Duration(rx.Time - tx.Time)
				if d < 0 || d >= 10*time.Millisecond {
					t.Errorf("datagram %d: rx - tx = %v, want in [0, 10ms)", i, d)
				}
				lat = append(lat, d)
			}
			if got, want := a.Stats(), (Stats{TxKernel: n}); got != want {
				t.Errorf("sender stats = %+v, want %+v", got, want)
			}
			if got, want := b.Stats(), (Stats{RxKernel: n}); got != want {
				t.Errorf("receiver stats = %+v, want %+v", got, want)
			}
			slices.Sort(lat)
			t.Logf("tx→rx: min %v, median %v, p99 %v, max %v", lat[0], lat[n/2], lat[n*99/100], lat[n-1])
		})
	}
}

func TestListen(t *testing.T) {
	taken := listen(t, "127.0.0.1").LocalAddr()
	tests := []struct {
		laddr   netip.AddrPort
		wantErr bool
	}{
		{laddr: netip.MustParseAddrPort("127.0.0.1:0")},
		{laddr: netip.MustParseAddrPort("[::1]:0")},
		{laddr: netip.MustParseAddrPort("0.0.0.0:0")},
		{laddr: taken, wantErr: true},
		{laddr: netip.AddrPort{}, wantErr: true},
		{laddr: netip.MustParseAddrPort("192.0.2.1:0"), wantErr: true}, // not a local address
	}
	for _, tt := range tests {
		t.Run(tt.laddr.String(), func(t *testing.T) {
			if tt.laddr.Addr().Is6() && tt.laddr.Addr().IsLoopback() {
				needIPv6(t)
			}
			c, err := Listen(tt.laddr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Listen(%s): err = %v, want error %v", tt.laddr, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			defer c.Close()
			got := c.LocalAddr()
			if got.Addr() != tt.laddr.Addr() || got.Port() == 0 {
				t.Errorf("LocalAddr() = %s, want %s with a port", got, tt.laddr.Addr())
			}
		})
	}
}

func TestSendError(t *testing.T) {
	a := listen(t, "127.0.0.1")
	if _, err := a.Send(netip.MustParseAddrPort("[::1]:9"), []byte("x")); err == nil {
		t.Error("Send from an IPv4 socket to an IPv6 address: no error")
	}
	if got := a.Stats(); got != (Stats{}) {
		t.Errorf("stats after a failed Send = %+v, want none", got)
	}
	a.Close()
	if _, err := a.Send(netip.MustParseAddrPort("127.0.0.1:9"), []byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Send after Close: err = %v, want net.ErrClosed", err)
	}
}

func TestCloseUnblocksRecv(t *testing.T) {
	c, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, _, err := c.Recv(make([]byte, 64))
		errc <- err
	}()
	select {
	case err := <-errc:
		t.Fatalf("Recv returned before Close: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Recv after Close: err = %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Recv still blocked 5s after Close")
	}
	if _, _, _, err := c.Recv(make([]byte, 64)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Recv on a closed Conn: err = %v, want net.ErrClosed", err)
	}
}

// TestConcurrentSendRecv sends from one goroutine while another receives on
// the same socket: a sends to b, b echoes, a's reader takes the echoes.
func TestConcurrentSendRecv(t *testing.T) {
	const n, window = 500, 32
	a, b := listen(t, "127.0.0.1"), listen(t, "127.0.0.1")
	echoed := make(chan error, 1)
	go func() { // b echoes n datagrams
		buf := make([]byte, 64)
		for range n {
			size, from, _, err := b.Recv(buf)
			if err != nil {
				echoed <- err
				return
			}
			if _, err := b.Send(from, buf[:size]); err != nil {
				echoed <- err
				return
			}
		}
		echoed <- nil
	}()
	credit := make(chan struct{}, window)
	done := make(chan error, 1)
	go func() { // a's reader
		buf := make([]byte, 64)
		seen := make([]bool, n)
		for range n {
			size, _, rx, err := a.Recv(buf)
			if err != nil {
				done <- err
				return
			}
			var i int
			if _, err := fmt.Sscanf(string(buf[:size]), "echo %d", &i); err != nil || i < 0 || i >= n || seen[i] {
				done <- fmt.Errorf("unexpected datagram %q", buf[:size])
				return
			}
			if rx.Source != SourceKernel {
				done <- fmt.Errorf("datagram %d: rx stamp from %s", i, rx.Source)
				return
			}
			seen[i] = true
			_ = a.Stats()
			<-credit
		}
		done <- nil
	}()
	timeout := time.After(10 * time.Second)
	for i := range n {
		select {
		case credit <- struct{}{}:
		case err := <-done:
			t.Fatalf("reader stopped after %d sends: %v", i, err)
		case <-timeout:
			t.Fatalf("echoes still missing after 10s, %d sent", i)
		}
		tx, err := a.Send(b.LocalAddr(), fmt.Appendf(nil, "echo %d", i))
		if err != nil {
			t.Fatal(err)
		}
		// The loopback queues the stamp before sendmsg returns and Send
		// looks at least once, so the stamp is the kernel's however late
		// a busy machine lets Send look.
		if tx.Source != SourceKernel {
			t.Errorf("datagram %d: tx stamp from %s", i, tx.Source)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-timeout:
		t.Fatal("echoes still missing after 10s")
	}
	if err := <-echoed; err != nil {
		t.Fatal(err)
	}
	if got, want := a.Stats(), (Stats{TxKernel: n, RxKernel: n}); got != want {
		t.Errorf("a's stats = %+v, want %+v", got, want)
	}
	if got, want := b.Stats(), (Stats{TxKernel: n, RxKernel: n}); got != want {
		t.Errorf("b's stats = %+v, want %+v", got, want)
	}
}

// TestTxStampPastDeadline: a Send whose thread a busy machine descheduled
// past its wait, between sendmsg and its first look at the error queue,
// still takes the kernel stamp queued meanwhile (on the loopback, before
// sendmsg returned) rather than falling back to the user stamp.
func TestTxStampPastDeadline(t *testing.T) {
	a, b := listen(t, "127.0.0.1"), listen(t, "127.0.0.1")
	before := time.Now().UnixNano()
	if _, _, err := a.uc.WriteMsgUDPAddrPort([]byte("x"), nil, b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	var ok bool
	var stamp int64
	if err := a.rc.Control(func(fd uintptr) {
		_, stamp, ok = a.awaitTx(int(fd), 0, before, time.Now().Add(-time.Second))
	}); err != nil {
		t.Fatal(err)
	}
	if !ok || stamp < before {
		t.Errorf("awaitTx past its deadline: stamp %d, ok %v; want the kernel's, after %d", stamp, ok, before)
	}
}
