package nodestatus_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chronosync/chronosync/nodestatus"
)

// A node serves its status on a socket and hands the server a new
// snapshot after every round; `chronosync status` queries it.
func Example() {
	dir, _ := os.MkdirTemp("", "nodestatus")
	defer os.RemoveAll(dir)
	srv, err := nodestatus.Listen(filepath.Join(dir, "node1.sock"), nodestatus.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// After a round:
	end := time.Now()
	srv.Set(nodestatus.Status{
		Node: 1, Nodes: 2, Reference: 0, PID: os.Getpid(), State: nodestatus.StateOK,
		LastRound: nodestatus.Round{ID: 7, End: end, LatencyNS: 2e6},
		OffsetNS:  -1500, OffsetSigmaNS: 40,
		SelfCheck:  nodestatus.SelfCheck{Within: 4, Of: 4, Pass: true},
		ValidUntil: end.Add(10 * time.Second),
	})

	st, err := nodestatus.Query(srv.Path())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.State, st.LastRound.ID, st.OffsetNS, st.SelfCheck.Within, "of", st.SelfCheck.Of)
	// Output: ok 7 -1500 4 of 4
}
