// Package mpirun is PhaseGap's MPI driver: one rank of `chronosync
// phasegap` under mpirun — MPI_Init_thread at the thread level asked for,
// the launcher's checks, CPU affinity, the benchmark, the gather to rank
// 0 and its run directory (through package output, the tail every
// transport shares). The driver is built with -tags mpi; without it, Run
// checks the options and refuses with mpi.ErrNotBuilt.
package mpirun
