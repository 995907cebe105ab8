package netem_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chronosync/chronosync/model/netem"
)

// A 10 Mbit/s link with 5 ms of delay and a queue of 3 packets, offered a
// burst of 5 packets of 1250 bytes (1 ms each on the wire) at once.
func Example() {
	link, err := netem.New(netem.Params{
		Delay: 5 * time.Millisecond,
		Rate:  netem.Rate{BitsPerSecond: 10_000_000},
		Limit: 3,
	}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	for i := range 5 {
		r := link.Send(0, 1250)
		if r.N == 0 {
			fmt.Printf("packet %d: dropped (%v)\n", i, r.Drop)
			continue
		}
		fmt.Printf("packet %d: delivered at %v\n", i, time.Duration(r.Out[0].At))
	}
	fmt.Println("held at 6.5ms:", link.QueueLen(int64(6500*time.Microsecond)))
	fmt.Printf("%+v\n", link.Stats())
	// Output:
	// packet 0: delivered at 6ms
	// packet 1: delivered at 7ms
	// packet 2: delivered at 8ms
	// packet 3: dropped (queue-limit)
	// packet 4: dropped (queue-limit)
	// held at 6.5ms: 2
	// {Sent:5 Delivered:3 Lost:0 QueueDropped:2 Duplicated:0 Corrupted:0 Reordered:0 CrossSent:0 CrossDropped:0}
}
