//go:build !mpi

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/mpi"
)

// mpiBuilt says whether this chronosync runs the MPI benchmark.
const mpiBuilt = false

// runPhasegap refuses: this chronosync was built without MPI (after
// checking the flags, which need no MPI).
func runPhasegap(_ *cobra.Command, o *phasegapOpts) error {
	if err := o.check(); err != nil {
		return fmt.Errorf("phasegap: %w", err)
	}
	return fmt.Errorf("phasegap: %w", mpi.ErrNotBuilt)
}
