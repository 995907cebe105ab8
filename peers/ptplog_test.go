package peers

import (
	"slices"
	"testing"
)

func TestParsePTPLine(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		report, ok bool
		want       ptpReport
	}{
		{"free running", "ptp4l[11564.494]: master offset        393 s0 freq    +437 path delay      2043", true, true, ptpReport{393, 0}},
		{"negative", "ptp4l[11565.495]: master offset       -765 s0 freq   -1268 path delay      1932", true, true, ptpReport{-765, 0}},
		{"locked", "ptp4l[1234.567]: master offset        -12 s2 freq      +0 path delay       345", true, true, ptpReport{-12, 2}},
		{"port state", "ptp4l[11561.967]: port 1: INITIALIZING to LISTENING on INIT_COMPLETE", false, false, ptpReport{}},
		{"summary", "ptp4l[11561.967]: rms  123 max  456 freq   +12 +/-  34 delay  2000 +/-  10", false, false, ptpReport{}},
		{"empty", "", false, false, ptpReport{}},
		{"other program", "phc2sys[1.0]: master offset 1 s2 freq +0 path delay 1", false, false, ptpReport{}},
		{"truncated", "ptp4l[11564.494]: master offset        393 s0 freq", true, false, ptpReport{}},
		{"bad offset", "ptp4l[11564.494]: master offset        3x3 s0 freq    +437 path delay      2043", true, false, ptpReport{}},
		{"bad state", "ptp4l[11564.494]: master offset        393 s7 freq    +437 path delay      2043", true, false, ptpReport{}},
		{"state without s", "ptp4l[11564.494]: master offset        393 0 freq    +437 path delay      2043", true, false, ptpReport{}},
		{"bad delay", "ptp4l[11564.494]: master offset        393 s0 freq    +437 path delay      -", true, false, ptpReport{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, report, ok := parsePTPLine(tt.line)
			if report != tt.report || ok != tt.ok || r != tt.want {
				t.Errorf("parsePTPLine(%q) = %+v, %v, %v; want %+v, %v, %v", tt.line, r, report, ok, tt.want, tt.report, tt.ok)
			}
		})
	}
}

// TestPtp4lWrite feeds captured ptp4l -m output in odd-sized chunks, as a
// pipe may deliver it.
func TestPtp4lWrite(t *testing.T) {
	const out = `ptp4l[11561.969]: port 1: INITIALIZING to LISTENING on INIT_COMPLETE
ptp4l[11561.969]: port 0: INITIALIZING to LISTENING on INIT_COMPLETE
ptp4l[11562.931]: port 1: new foreign master 8aa129.fffe.f39547-1
ptp4l[11563.431]: port 1: LISTENING to UNCALIBRATED on RS_SLAVE
ptp4l[11564.494]: master offset        393 s0 freq    +437 path delay      2043
ptp4l[11565.495]: master offset       -765 s0 freq   -1268 path delay      1932
ptp4l[11566.497]: master offset         12 s0 freq   +1168 garbage
ptp4l[11567.498]: master offset        -45 s0 freq    -250 path delay      2131
ptp4l[11568.499]: master offset         35 s0 freq    -104 path delay      19`
	d := &ptp4l{}
	if d.listening() {
		t.Fatal("listening before any output")
	}
	for rest := out; rest != ""; {
		n := min(7, len(rest))
		if _, err := d.Write([]byte(rest[:n])); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if !d.listening() {
		t.Error("not listening after INITIALIZING to LISTENING")
	}
	samples, malformed, err := d.Samples()
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, s := range samples {
		got = append(got, s.OffsetNS)
	}
	// The last line is incomplete, so not read yet.
	if want := []float64{393, -765, -45}; !slices.Equal(got, want) || malformed != 1 {
		t.Errorf("offsets %v malformed %d, want %v and 1", got, malformed, want)
	}
	d.Write([]byte("47\n"))
	if samples, _, _ := d.Samples(); len(samples) != 4 || samples[3].OffsetNS != 35 {
		t.Errorf("after the last line's end: %v", samples)
	}
}
