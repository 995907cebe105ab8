package pingrun

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/harness/engine"
)

// Summary is the outcome of the ping exchange: summary.json's "ping".
type Summary struct {
	Sent     int `json:"sent"`
	Answered int `json:"answered"`
	Received int `json:"received"`
	// LossFraction is 1 - received/sent: pings or replies that never came
	// back.
	LossFraction float64 `json:"loss_fraction"`
	// RTT is the round-trip delay without the peer's turnaround, in ns.
	RTT stats.Summary `json:"rtt_ns"`
	// OffsetError is |NTP offset estimate − true offset| in ns, the true
	// offset being the two host clocks' noise-free difference at the
	// moment the reply arrived.
	OffsetError stats.Summary `json:"offset_error_ns"`
	// WithinBound is the fraction of exchanges whose |offset error| is at
	// most half their round trip, the bound an NTP exchange reports: it
	// holds whatever the two paths' delays, so only timestamps that are
	// not when the datagrams left and arrived break it.
	WithinBound float64 `json:"within_bound"`
}

// Print writes the ping exchange: its counts and a table of the round
// trips and offset errors, in one unit.
func (p *Summary) Print(w io.Writer) {
	if p.Sent > 0 {
		fmt.Fprintf(w, "ping: %s sent, %s replies (%.2f%% of pings got none)\n", engine.Count(p.Sent), engine.Count(p.Received), 100*p.LossFraction)
	} else {
		// No share of nothing: a count of 0 says it.
		fmt.Fprintf(w, "ping: none sent, %s replies\n", engine.Count(p.Received))
	}
	if p.RTT.N == 0 {
		fmt.Fprintln(w, "  no exchange completed: no round trip to report")
		return
	}
	rtt, off := p.RTT, p.OffsetError
	u := engine.UnitFor(rtt.P50, rtt.P95, rtt.P99, rtt.Max, off.P50, off.P95, off.P99, off.Max)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	label := engine.PadRight([]string{"in " + u.Name, "rtt", "|offset err|"})
	fmt.Fprintf(tw, "%s\tp50\tp95\tp99\tmax\t\n", label[0])
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", label[1], u.Format(rtt.P50), u.Format(rtt.P95), u.Format(rtt.P99), u.Format(rtt.Max))
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", label[2], u.Format(off.P50), u.Format(off.P95), u.Format(off.P99), u.Format(off.Max))
	tw.Flush()
	fmt.Fprintf(w, "  reported bound (half the round trip): %.1f %% of the exchanges' errors within it", 100*p.WithinBound)
	if p.WithinBound < groundtruth.Target {
		fmt.Fprintf(w, ": NOT CALIBRATED, want ≥ %.0f %%: the timestamps are not when the datagrams left and arrived", 100*groundtruth.Target)
	}
	fmt.Fprintln(w)
	if rtt.N != p.Received {
		// ping.Node reports an exchange when the pair's next reply brings
		// the peer's receive and send times of the one before
		// (interleaved timestamps).
		fmt.Fprintf(w, "  from %s exchanges of the %s replies: a reply brings the peer's timestamps of the exchange before it, so each pair's last exchange gives none, and each lost reply costs one more\n",
			engine.Count(rtt.N), engine.Count(p.Received))
	}
}
