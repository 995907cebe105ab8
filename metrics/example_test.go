package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/metrics"
	"github.com/chronosync/chronosync/rounds"
)

// A master's metrics, fed one round from its rounds.Observer.Round and
// served on a loopback port until the context ends.
func Example() {
	m := metrics.NewWithOptions(0, true, metrics.Options{NoRuntime: true})

	// What the master's Observer.Round hands over at the end of a round.
	m.ObserveRound(&rounds.RoundReport{
		Round:   7,
		Missing: []int{2},
		Summary: &graphcalc.RoundSummary{Round: 7, Reference: 0, Consistency: graphcalc.Consistency{Birge: 0.9, Consistent: true}},
		Offsets: []offsets.Offset{{RoundID: 7, NodeID: 1, OffsetNS: 1250, DriftPPM: 0.8, UncertaintyNS: 3,
			SelfCheck: &offsets.SelfCheck{Predictions: 2, Within3Sigma: 2, MaxSigma: 1.1}}},
		Figures: rounds.Figures{EndToStart: 40 * time.Millisecond, SequenceSkew: 2 * time.Microsecond, Retries: 1},
	})

	ln, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- metrics.ServeListener(ctx, ln, m) }()

	resp, err := http.Get("http://" + ln.Addr().String() + metrics.Path)
	if err != nil {
		fmt.Println(err)
		return
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for _, name := range []string{"chronosync_round_latency_last_seconds", "chronosync_round_sequence_skew_seconds",
			"chronosync_round_missing_nodes", "chronosync_rounds_total", "chronosync_node_offset_seconds",
			"chronosync_node_selfcheck_within_3sigma_total", "chronosync_node_status"} {
			if strings.HasPrefix(sc.Text(), name+" ") || strings.HasPrefix(sc.Text(), name+"{") {
				fmt.Println(sc.Text())
			}
		}
	}
	resp.Body.Close()
	stop()
	fmt.Println("serve:", <-done)
	// Output:
	// chronosync_node_offset_seconds{node="1"} 1.25e-06
	// chronosync_node_selfcheck_within_3sigma_total{node="1"} 2
	// chronosync_node_status{node="1",status="ok"} 1
	// chronosync_node_status{node="2",status="missing"} 1
	// chronosync_round_latency_last_seconds 0.04
	// chronosync_round_missing_nodes 1
	// chronosync_round_sequence_skew_seconds 2e-06
	// chronosync_rounds_total{result="partial"} 0
	// chronosync_rounds_total{result="solved"} 1
	// chronosync_rounds_total{result="unsolved"} 0
	// serve: <nil>
}
