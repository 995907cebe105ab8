//go:build !unix

package combine

import (
	"testing"
	"time"
)

// cpuTime is not measured here: the benchmark reports 0 cpu-ns/event.
func cpuTime(*testing.B) time.Duration { return 0 }
