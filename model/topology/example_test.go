package topology_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/chronosync/chronosync/model/topology"
)

func Example() {
	ring, err := topology.Ring(4)
	if err != nil {
		panic(err)
	}
	fmt.Println(ring)
	nb, err := topology.Neighbours(4, ring)
	if err != nil {
		panic(err)
	}
	fmt.Println(nb)

	g, err := topology.RandomRegular(8, 3, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(g), "directed edges")
	// Output:
	// [{0 1} {0 3} {1 0} {1 2} {2 1} {2 3} {3 0} {3 2}]
	// [[1 3] [0 2] [1 3] [0 2]]
	// 24 directed edges
}
