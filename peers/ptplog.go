package peers

import (
	"strconv"
	"strings"
)

// ptpReport is one "master offset" line of ptp4l -m.
type ptpReport struct {
	offsetNS int64 // slave clock minus master clock, as measured
	state    int   // servo state: 0 unlocked, 1 jump, 2 locked
}

// parsePTPLine parses a line of ptp4l's standard output, such as
//
//	ptp4l[11564.494]: master offset        393 s0 freq    +437 path delay      2043
//
// report reports a "master offset" line; ok whether it was well formed.
// Other lines (port state changes, notices) have report false.
//
// Under free_running 1, ptp4l never runs its servo, so every line says s0;
// the offset is then the raw measurement of the unadjusted clock against the
// master's, one per freq_est_interval (at least a second).
func parsePTPLine(line string) (r ptpReport, report, ok bool) {
	_, rest, found := strings.Cut(line, "]: ")
	if !found || !strings.HasPrefix(line, "ptp4l[") || !strings.HasPrefix(rest, "master offset") {
		return ptpReport{}, false, false
	}
	f := strings.Fields(rest)
	// master offset N sS freq F path delay D
	if len(f) != 9 || f[4] != "freq" || f[6] != "path" || f[7] != "delay" {
		return ptpReport{}, true, false
	}
	offset, err1 := strconv.ParseInt(f[2], 10, 64)
	state, err2 := strconv.Atoi(strings.TrimPrefix(f[3], "s"))
	_, err3 := strconv.ParseInt(f[5], 10, 64)
	_, err4 := strconv.ParseInt(f[8], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || !strings.HasPrefix(f[3], "s") || state < 0 || state > 2 {
		return ptpReport{}, true, false
	}
	return ptpReport{offsetNS: offset, state: state}, true, true
}
