//go:build !mpi

package mpirun

import (
	"fmt"
	"io"

	"github.com/chronosync/chronosync/mpi"
)

// Built says whether this build runs the MPI benchmark.
const Built = false

// Run refuses: this build has no MPI (after prepare, which checks the
// options and needs no MPI).
func Run(_ *Options, prepare func() error, _, _ io.Writer) error {
	if err := prepare(); err != nil {
		return fmt.Errorf("phasegap: %w", err)
	}
	return fmt.Errorf("phasegap: %w", mpi.ErrNotBuilt)
}
