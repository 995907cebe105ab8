package plot

import (
	"reflect"
	"testing"
)

// TestConfigColumns pins the columns that identify a configuration
// across transports, in the order its key is built: the label's first,
// then the table's, without radius and the OpenMP schedule and chunk.
func TestConfigColumns(t *testing.T) {
	want := []string{"P", "T", "H", "flops_per_point", "bytes_per_point", "mode", "progress",
		"N", "kernel", "timesteps", "iters", "warmup", "poll_every"}
	if got := configColumns(); !reflect.DeepEqual(got, want) {
		t.Errorf("configColumns() = %v, want %v", got, want)
	}
}
