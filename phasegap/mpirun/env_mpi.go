//go:build mpi

package mpirun

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/phasegap/buildstamp"
	"github.com/chronosync/chronosync/phasegap/report"
)

// mpiImpl names the implementation from MPI_Get_library_version's text.
func mpiImpl(version string) string {
	for _, impl := range []string{"Open MPI", "MPICH", "Intel(R) MPI", "MVAPICH"} {
		if strings.Contains(version, impl) {
			return impl
		}
	}
	return "unknown"
}

// buildInfo is the binary's build: Go version, compiler, tags, revision
// (the toolchain's VCS stamp, else the Makefile's ldflags: package
// buildstamp).
func buildInfo() report.BuildInfo {
	st := buildstamp.Read()
	b := report.BuildInfo{GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		GitSHA: st.SHA, GitSHASource: st.Source, GitModified: st.Modified}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "-tags":
				b.BuildTags = strings.Split(s.Value, ",")
			case "CGO_CFLAGS", "CGO_LDFLAGS", "-gcflags", "-ldflags":
				b.Flags = strings.TrimSpace(b.Flags + " " + s.Key + "=" + s.Value)
			}
		}
	}
	return b
}

// runEnv is the MPI, OpenMP and Go runtime environment of the process.
func runEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		for _, prefix := range []string{"OMPI_", "OMP_", "PMIX_", "PMI_", "MPI", "GOMAXPROCS", "GODEBUG", "GOGC", "SLURM_"} {
			if strings.HasPrefix(k, prefix) {
				env[k] = v
				break
			}
		}
	}
	return env
}

// platformInfo is uname and /proc/cpuinfo's model and core counts.
func platformInfo() report.PlatformInfo {
	var p report.PlatformInfo
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		str := func(b []byte) string { return string(bytes.TrimRight(b, "\x00")) }
		p.Sysname, p.Nodename, p.Release, p.Version, p.Machine = str(u.Sysname[:]), str(u.Nodename[:]), str(u.Release[:]), str(u.Version[:]), str(u.Machine[:])
		p.Uname = strings.Join([]string{p.Sysname, p.Nodename, p.Release, p.Version, p.Machine}, " ")
	}
	// The host's CPUs, not runtime.NumCPU: that is this rank's
	// affinity, one CPU where mpirun binds a rank to a core.
	p.LogicalCPUs = HostCPUs()
	p.RankCPUs, p.RankCPUList = RankCPUs()
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return p
	}
	defer f.Close()
	cores, sockets := map[string]bool{}, map[string]bool{}
	var phys string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			p.CPUModel = v
		case "physical id":
			phys = v
			sockets[v] = true
		case "core id":
			cores[phys+"/"+v] = true
		}
	}
	p.Sockets, p.PhysicalCores = len(sockets), len(cores)
	p.Topology = fmt.Sprintf("%d socket(s), %d core(s), %d logical CPU(s); rank 0 bound to %d (%s)", p.Sockets, p.PhysicalCores, p.LogicalCPUs, p.RankCPUs, p.RankCPUList)
	return p
}
