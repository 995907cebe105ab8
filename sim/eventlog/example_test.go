package eventlog_test

import (
	"fmt"
	"os"

	"github.com/chronosync/chronosync/sim/eventlog"
)

func Example() {
	log := eventlog.New(os.Stdout)
	log.Add(eventlog.Record{T: 0, Node: 0, Kind: eventlog.Boot, A: 1})
	log.Add(eventlog.Record{T: 1500, Node: 0, Kind: eventlog.Send, Peer: 1, A: eventlog.Ports(7000, 7000), B: 64, C: 2001500})
	log.Add(eventlog.Record{T: 51500, Node: 0, Kind: eventlog.Drop, Peer: 1, A: eventlog.ReasonLoss, B: 64})
	if err := log.Flush(); err != nil {
		panic(err)
	}
	fmt.Printf("%d events, hash %016x\n", log.Count(), log.Hash())
	// Output:
	// 1 0 boot n=0 inc=1
	// 2 1500 send n=0 to=1 ports=7000>7000 len=64 tx=2001500
	// 3 51500 drop n=0 to=1 why=loss len=64
	// 3 events, hash bf367305d958a81e
}
