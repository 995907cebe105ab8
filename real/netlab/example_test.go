//go:build linux

package netlab_test

import (
	"fmt"
	"log"
	"net"
	"net/netip"

	"github.com/chronosync/chronosync/real/netlab"
)

// ExampleCreate builds a two-node lab on a bridge and opens a UDP socket
// in node 1's namespace that node 0 can reach.
func ExampleCreate() {
	if err := netlab.Available(); err != nil {
		log.Fatal(err)
	}
	lab, err := netlab.Create(netlab.Config{Prefix: netlab.NewPrefix(), Nodes: 2, Kind: netlab.Bridge})
	if err != nil {
		log.Fatal(err)
	}
	defer lab.Close()

	var conn *net.UDPConn
	err = lab.Do(1, func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(lab.Addr(1), 319)))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close() // before lab.Close: an open socket keeps the namespace alive
	fmt.Println(lab.NodeNS(1), conn.LocalAddr())
}
