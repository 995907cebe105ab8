package kernel_test

import (
	"fmt"

	"github.com/chronosync/chronosync/sim/kernel"
)

// ticker prints the virtual time and reschedules itself three times.
type ticker struct{ k *kernel.Kernel }

func (t *ticker) Fire(n uint64) {
	fmt.Printf("t=%d tick %d\n", t.k.Now(), n)
	if n < 3 {
		t.k.After(250, t, n+1)
	}
}

func Example() {
	var k kernel.Kernel
	t := &ticker{k: &k}
	k.After(100, t, 1)
	k.RunUntil(1000)
	fmt.Println("now", k.Now(), "fired", k.Fired())
	// Output:
	// t=100 tick 1
	// t=350 tick 2
	// t=600 tick 3
	// now 1000 fired 3
}
