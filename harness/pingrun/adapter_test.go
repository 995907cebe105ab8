package pingrun

import (
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/scenario"
)

// TestNew: the scenario's payload is raised to ping's header, and an
// interval ping refuses is the constructor's error, before any run.
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		payload  int
		want     int    // the payload the adapter sends
		err      string // "" for none
	}{
		{"payload kept", 20 * time.Millisecond, 64, 64, ""},
		{"payload raised to the header", 20 * time.Millisecond, 0, ping.HeaderSize, ""},
		{"no interval", 0, 64, 0, "interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc scenario.Scenario
			sc.Protocol.Interval, sc.Protocol.Payload = tc.interval, tc.payload
			p, err := New(&sc, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New: err %v, want one about %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*Adapter).cfg.Payload; got != tc.want {
				t.Errorf("payload %d, want %d", got, tc.want)
			}
		})
	}
}

// TestPrint: a summary without exchanges says so instead of a table, and
// one whose calibration fails says NOT CALIBRATED.
func TestPrint(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Summary
		want []string
		not  []string
	}{
		{"none sent", Summary{}, []string{"ping: none sent, 0 replies", "no exchange completed"}, []string{"NOT CALIBRATED"}},
		{"calibrated", Summary{Sent: 10, Received: 10, RTT: stats.Summary{N: 10, Max: 2000}, WithinBound: 1},
			[]string{"ping: 10 sent, 10 replies (0.00% of pings got none)", "in µs"}, []string{"NOT CALIBRATED", "no exchange completed"}},
		{"not calibrated", Summary{Sent: 10, Received: 10, RTT: stats.Summary{N: 10, Max: 200}, WithinBound: 0.5},
			[]string{"50.0 % of the exchanges' errors within it: NOT CALIBRATED", "in ns"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			tc.s.Print(&b)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("%q in\n%s", w, b.String())
				}
			}
		})
	}
}
