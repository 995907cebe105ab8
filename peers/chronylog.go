package peers

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Columns of chrony 4's tracking.log (chrony.conf(5), "log tracking").
const (
	trackDate      = 0  // UTC date
	trackTime      = 1  // UTC time of day, whole seconds
	trackOffset    = 6  // "Offset": estimated offset of the NTP clock, s, positive fast
	trackLeap      = 7  // leap status; "?" while not synchronised
	trackRemCorr   = 10 // "Rem. corr.": NTP clock minus system clock, s
	trackMinFields = 14
)

// parseTracking parses the text of chronyd's tracking.log into samples and
// the number of malformed lines, which it skips. Banner lines, blank lines
// and lines of an unsynchronised clock (leap status "?", which chronyd
// writes before its first measurement) are ignored.
//
// Each line is a clock update. Its "Offset" column is relative to chronyd's
// NTP clock, a virtual clock kept apart from the system clock, which under
// -x is never corrected. "Rem. corr." is how far the NTP clock was from the
// system clock before the update. A sample's offset is therefore
// Offset - Rem.corr.: the system clock's offset from the server as chronyd
// estimates it just after the update, what `chronyc tracking` reports as
// "System time" (negated there: "slow" is positive). Since the system clock
// is the server's clock, this is chronyd's error. The Offset column alone
// is only the last correction's size, typically tens of nanoseconds here.
func parseTracking(text string) (samples []Sample, malformed int) {
	for line := range strings.Lines(text) {
		s, ok, skip := parseTrackingLine(line)
		switch {
		case skip:
		case ok:
			samples = append(samples, s)
		default:
			malformed++
		}
	}
	return samples, malformed
}

// parseTrackingLine parses one line of tracking.log. skip reports a blank
// or banner line; otherwise ok reports whether the line was well formed.
func parseTrackingLine(line string) (s Sample, ok, skip bool) {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || strings.HasPrefix(trimmed, "=") || strings.HasPrefix(trimmed, "Date") {
		return Sample{}, false, true
	}
	f := strings.Fields(trimmed)
	if len(f) < trackMinFields {
		return Sample{}, false, false
	}
	if f[trackLeap] == "?" {
		return Sample{}, false, true
	}
	at, err := time.Parse(time.DateTime, f[trackDate]+" "+f[trackTime])
	if err != nil {
		return Sample{}, false, false
	}
	offset, err1 := strconv.ParseFloat(f[trackOffset], 64)
	remCorr, err2 := strconv.ParseFloat(f[trackRemCorr], 64)
	if err1 != nil || err2 != nil || !finite(offset) || !finite(remCorr) {
		return Sample{}, false, false
	}
	return Sample{At: at, OffsetNS: (offset - remCorr) * 1e9}, true, false
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
