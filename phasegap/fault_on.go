//go:build phasegap_fault

package phasegap

import (
	"fmt"
	"math"
	"os"
)

// FaultEnv names the environment variable that injects a halo bug into a
// build tagged phasegap_fault (for showing --check and --poison_ghost
// catch one): "RANK:ITER:add" adds 1 to the rank's last left ghost cell
// after the halos are unpacked at that iteration, "RANK:ITER:nan" leaves
// it NaN (as an unpack that missed it would, under --poison_ghost).
const FaultEnv = "CHRONOSYNC_PHASEGAP_FAULT"

// envFault reads FaultEnv; nil when unset or malformed.
func envFault() faultHook {
	var rk, iter int
	var kind string
	v := os.Getenv(FaultEnv)
	if v == "" {
		return nil
	}
	if _, err := fmt.Sscanf(v, "%d:%d:%s", &rk, &iter, &kind); err != nil {
		fmt.Fprintf(os.Stderr, "phasegap: %s=%q: %v (want RANK:ITER:add|nan)\n", FaultEnv, v, err)
		return nil
	}
	return func(rank, it int, a []float64, h, _ int) {
		if rank != rk || it != iter || h == 0 {
			return
		}
		if kind == "nan" {
			a[h-1] = math.NaN()
		} else {
			a[h-1]++
		}
	}
}
