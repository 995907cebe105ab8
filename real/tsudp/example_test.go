package tsudp_test

import (
	"fmt"
	"log"
	"net/netip"

	"github.com/chronosync/chronosync/real/tsudp"
)

func Example() {
	a, err := tsudp.Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := tsudp.Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	tx, err := a.Send(b.LocalAddr(), []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 1500)
	n, from, rx, err := b.Recv(buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q from the sender: %v\n", buf[:n], from == a.LocalAddr())
	fmt.Printf("received after sent: %v\n", rx.Time >= tx.Time)
	// tx.Source and rx.Source say whether the stamps are the kernel's.
	// Output:
	// "hello" from the sender: true
	// received after sent: true
}
