package busy

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/real/hostload"
)

func TestReading(t *testing.T) {
	for _, tt := range []struct {
		r    Reading
		busy bool
		text string
	}{
		{Reading{Span: 2 * time.Second, CPUs: 2, Share: 0.97}, true, "2 CPUs 97% busy over 2s (/proc/stat)"},
		{Reading{Span: 2 * time.Second, CPUs: 2, Share: 0.5}, false, "2 CPUs 50% busy over 2s (/proc/stat)"},
		{Reading{Err: errors.New("no /proc")}, false, "no measurement of the machine's load (no /proc)"},
	} {
		if got := tt.r.Busy(); got != tt.busy {
			t.Errorf("%+v: Busy() = %v, want %v", tt.r, got, tt.busy)
		}
		if got := tt.r.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
	}
}

// TestMeter measures this machine while it spins on one CPU: whatever the
// rest of its load, a Meter on Linux accounts some of that time as busy.
func TestMeter(t *testing.T) {
	if _, err := hostload.ReadCPUTimes(); err != nil {
		t.Skipf("no /proc/stat here: %v", err)
	}
	m := Start()
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	r := m.Reading()
	t.Logf("this machine: %s", r)
	if r.Err != nil || r.CPUs < 1 || r.Share <= 0 || r.Share > 1 {
		t.Errorf("reading %+v: want a busy share in (0, 1] of some CPUs", r)
	}
}

// TestSkipIfBusy: a busy reading skips the test, naming the measurement; an
// idle one lets it go on.
func TestSkipIfBusy(t *testing.T) {
	t.Setenv(needs.EnvSkipLog, "") // not a skip of this machine's make test
	for _, tt := range []struct {
		busy    int64 // ticks of 1000
		skipped bool
	}{{950, true}, {500, false}} {
		m := &Meter{start: time.Now()}
		var err error
		if m.first, err = hostload.ReadCPUTimes(); err != nil {
			t.Skipf("no /proc/stat here: %v", err)
		}
		// Pretend the first reading was taken 1000 ticks ago, busy ones
		// of them: the CPU time since then is below a tick.
		m.first.Busy -= tt.busy
		m.first.Idle -= 1000 - tt.busy
		var sub *testing.T
		t.Run(fmt.Sprintf("%d of 1000 ticks busy", tt.busy), func(t *testing.T) {
			sub = t
			m.SkipIfBusy(t, "a made-up reading, to test SkipIfBusy")
		})
		if sub.Skipped() != tt.skipped {
			t.Errorf("%d of 1000 ticks busy: skipped %v, want %v", tt.busy, sub.Skipped(), tt.skipped)
		}
	}
	if !strings.Contains(fmt.Sprint(Reading{CPUs: 2, Share: 0.95}), "95% busy") {
		t.Error("a reading does not name its busy share")
	}
}
