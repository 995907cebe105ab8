package tsudp

import (
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"
)

// TestMain turns the kernel's receive timestamping on before the tests run.
// When the first socket on the machine asks for receive timestamps, the
// kernel enables them from a work item, asynchronously: datagrams received
// until then carry no timestamp (Recv falls back to SourceUser). A socket
// held open for the whole run keeps them on.
func TestMain(m *testing.M) {
	c, err := warmUp()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tsudp: warm-up:", err)
	}
	code := m.Run()
	if c != nil {
		c.Close()
	}
	os.Exit(code)
}

// warmUp sends datagrams over the loopback until one arrives with a kernel
// receive timestamp, and returns the receiving socket.
func warmUp() (*Conn, error) {
	laddr := netip.MustParseAddrPort("127.0.0.1:0")
	a, err := Listen(laddr)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	b, err := Listen(laddr)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 8)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := a.Send(b.LocalAddr(), []byte("warm-up")); err != nil {
			b.Close()
			return nil, err
		}
		_, _, rx, err := b.Recv(buf)
		if err != nil {
			b.Close()
			return nil, err
		}
		if rx.Source == SourceKernel {
			return b, nil
		}
	}
	return b, fmt.Errorf("no kernel receive timestamp within 5s (stats %+v)", b.Stats())
}
