//go:build !mpi

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/mpi"
)

// runPhasegap refuses: this chronosync was built without MPI.
func runPhasegap(*cobra.Command, *phasegapOpts) error {
	return fmt.Errorf("phasegap: %w", mpi.ErrNotBuilt)
}
