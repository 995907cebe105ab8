package phasegap

import "golang.org/x/sys/unix"

// pin binds the calling OS thread to cpu (sched_setaffinity), as
// OMP_PROC_BIND does for an OpenMP thread.
func pin(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// AllowedCPUs lists the CPUs the process may run on, in order; with
// cores, one logical CPU per physical core (the first of its siblings),
// as OMP_PLACES=cores places threads.
func AllowedCPUs(cores bool) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var out []int
	seen := map[string]bool{}
	for cpu := range 1024 {
		if !set.IsSet(cpu) {
			continue
		}
		if cores {
			if sib := siblings(cpu); sib != "" {
				if seen[sib] {
					continue
				}
				seen[sib] = true
			}
		}
		out = append(out, cpu)
	}
	return out, nil
}
