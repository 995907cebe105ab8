package scenario_test

import (
	"fmt"
	"log"

	"github.com/chronosync/chronosync/scenario"
)

func Example() {
	s, err := scenario.Load("../scenarios/quickstart.yaml")
	if err != nil {
		log.Fatal(err)
	}
	r, err := s.Resolve(s.Seed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d nodes, %d directed edges, %v\n", r.Name, len(r.Nodes), len(r.Edges), r.Duration)
	for _, e := range r.Out(0) {
		fmt.Printf("0->%d delay %v jitter %v\n", e.To, e.Link.Delay, e.Link.Jitter)
	}
	n := r.Nodes[1]
	fmt.Printf("node 1: offset within ±2ms: %v, drift within ±50ppm: %v\n",
		n.Clock.Offset.Abs() <= 2e6, n.Clock.PPM >= -50 && n.Clock.PPM <= 50)
	// Output:
	// quickstart: 4 nodes, 12 directed edges, 10s
	// 0->1 delay 50µs jitter 5µs
	// 0->2 delay 50µs jitter 5µs
	// 0->3 delay 50µs jitter 5µs
	// node 1: offset within ±2ms: true, drift within ±50ppm: true
}

func ExampleParse() {
	_, err := scenario.Parse("x.yaml", []byte("name: x\nduration: 10s\nnodes: 4\nlinks:\n  default:\n    delay: -5ms\n"))
	fmt.Println(err)
	// Output:
	// x.yaml:6: links.default.delay: negative delay "-5ms"; expected a duration >= 0
}
