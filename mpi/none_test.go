//go:build !mpi

package mpi

import (
	"errors"
	"testing"
)

// TestNotBuilt checks that, without the mpi tag, the calls that would reach
// MPI say so.
func TestNotBuilt(t *testing.T) {
	if _, err := InitThread(Funneled); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("InitThread: %v, want ErrNotBuilt", err)
	}
	if _, err := AllocFloat64(1); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("AllocFloat64: %v, want ErrNotBuilt", err)
	}
	if _, err := NewRequests(1); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("NewRequests: %v, want ErrNotBuilt", err)
	}
	if _, err := World().Rank(); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Rank: %v, want ErrNotBuilt", err)
	}
	if Initialized() {
		t.Error("Initialized() = true")
	}
}
