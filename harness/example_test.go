package harness_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/scenario"
)

func Example() {
	sc, err := scenario.Parse("example.yaml", []byte(`
name: example
duration: 1s
nodes: 3
links:
  default: {delay: 100us}
protocol: {kind: ping, interval: 50ms}
`))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "chronosync-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	res, err := harness.Run(sc, harness.Options{Out: filepath.Join(dir, "run")})
	if err != nil {
		panic(err)
	}
	p := res.Summary.Ping
	fmt.Printf("%d nodes, %d pings, %d replies, median rtt %.0fns\n", res.Summary.Nodes, p.Sent, p.Received, p.RTT.P50)
	if _, err := harness.Replay(res.Dir, harness.ReplayOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("replay matches")
	// Output:
	// 3 nodes, 120 pings, 120 replies, median rtt 200000ns
	// replay matches
}
