//go:build !unix

package graphcalc_test

import "time"

// cpuTime returns −1: this system's CPU time is not read here.
func cpuTime() time.Duration { return -1 }
