package mpi

import "testing"

func TestThreadLevelString(t *testing.T) {
	for l, want := range map[ThreadLevel]string{
		Single:     "MPI_THREAD_SINGLE",
		Funneled:   "MPI_THREAD_FUNNELED",
		Serialized: "MPI_THREAD_SERIALIZED",
		Multiple:   "MPI_THREAD_MULTIPLE",
		7:          "ThreadLevel(7)",
	} {
		if got := l.String(); got != want {
			t.Errorf("ThreadLevel(%d).String() = %q, want %q", int(l), got, want)
		}
	}
}
