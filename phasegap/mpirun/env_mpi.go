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

// gitSHA is the VCS revision the binary was built from, if recorded.
func gitSHA() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// buildInfo is the binary's build: Go version, compiler, tags, revision.
func buildInfo() report.BuildInfo {
	b := report.BuildInfo{GoVersion: runtime.Version(), Compiler: runtime.Compiler, GitSHA: gitSHA()}
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
	p.LogicalCPUs = runtime.NumCPU()
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
	p.Topology = fmt.Sprintf("%d socket(s), %d core(s), %d logical CPU(s)", p.Sockets, p.PhysicalCores, p.LogicalCPUs)
	return p
}
