package report

import (
	"encoding/json"
	"io"
	"math"
	"slices"
)

// BuildInfo describes the binary, as the caller knows it (for instance from
// runtime/debug.ReadBuildInfo); nothing here is read by this package.
type BuildInfo struct {
	GoVersion string `json:"go_version"`
	Compiler  string `json:"compiler"` // runtime.Compiler, or the C compiler of the cgo MPI wrapper
	Flags     string `json:"flags"`    // compiler/linker flags (CGO_CFLAGS, -gcflags, ...)
	GitSHA    string `json:"git_sha"`
	// GitSHASource says where GitSHA came from: "vcs" (the Go
	// toolchain's stamp, vcs.revision), "ldflags" (set at build time
	// from git rev-parse HEAD, where VCS stamping was off), or "none".
	GitSHASource string `json:"git_sha_source,omitempty"`
	// GitModified is the toolchain's vcs.modified: the tree had
	// uncommitted changes ("true"), or not ("false"); "" unknown.
	GitModified string   `json:"git_modified,omitempty"`
	BuildTags   []string `json:"build_tags"`
}

// PlatformInfo describes the machine, best effort: uname's fields and the
// CPU model and topology (P-/E-core counts where the OS tells them).
type PlatformInfo struct {
	Sysname       string `json:"sysname"`
	Nodename      string `json:"nodename"`
	Release       string `json:"release"`
	Version       string `json:"version"`
	Machine       string `json:"machine"`
	Uname         string `json:"uname"` // uname -a
	CPUModel      string `json:"cpu_model"`
	Sockets       int    `json:"sockets"`
	PhysicalCores int    `json:"physical_cores"`
	LogicalCPUs   int    `json:"logical_cpus"` // the host's (Host.CPUs), not the rank's binding
	// RankCPUs and RankCPUList are the CPUs rank 0 may run on (its
	// affinity: mpirun's binding), as a count and a list ("0-1").
	RankCPUs         int    `json:"rank_cpus,omitempty"`
	RankCPUList      string `json:"rank_cpu_list,omitempty"`
	PerformanceCores int    `json:"performance_cores"`
	EfficiencyCores  int    `json:"efficiency_cores"`
	Topology         string `json:"topology"` // free-form summary (lscpu, sysctl hw.*)
}

// Manifest is manifest.json: everything needed to interpret and repeat one
// run. The derived parameters are computed from Config when written.
type Manifest struct {
	Config   Config
	Build    BuildInfo
	Env      map[string]string // MPI/OMP/OMPI_*/... environment variables as captured by the caller
	Platform PlatformInfo
	Checksum uint64 // the all-reduced checksum64
	Row      Row    // the run's results row
}

// manifestJSON fixes manifest.json's key order.
type manifestJSON struct {
	SchemaVersion int               `json:"schema_version"`
	Args          Config            `json:"args"`
	Derived       Derived           `json:"derived"`
	Build         BuildInfo         `json:"build"`
	Env           map[string]string `json:"env"` // encoding/json writes map keys sorted
	Platform      PlatformInfo      `json:"platform"`
	Checksum64    string            `json:"checksum64,omitempty"` // absent without a check
	Host          *hostJSON         `json:"host,omitempty"`       // absent when unmeasured (a model run)
	Result        Row               `json:"result"`
}

// hostJSON is the manifest's host section: Row.Host in full (the three
// load averages at both ends), status and reasons; null for a figure the
// kernel did not give.
type hostJSON struct {
	CPUs             int         `json:"host_cpus"`
	RankCPUs         int         `json:"rank_cpus"`
	Oversubscription *float64    `json:"oversubscription"`
	LoadStart        [3]*float64 `json:"loadavg_start"`
	LoadEnd          [3]*float64 `json:"loadavg_end"`
	Pressure         *float64    `json:"cpu_pressure"`
	Steal            *float64    `json:"cpu_steal"`
	OthersCPUs       *float64    `json:"others_cpus"`
	Status           string      `json:"status"`
	Reasons          []string    `json:"degraded_reasons"`
}

// manifestHost is the manifest's host section of row, nil when unmeasured.
func manifestHost(r Row) *hostJSON {
	h := r.Host
	if !h.Measured {
		return nil
	}
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	reasons := h.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return &hostJSON{CPUs: h.CPUs, RankCPUs: r.RankCPUs,
		Oversubscription: f(h.Oversubscription(r.Config.Params.Ranks, r.Config.Params.Threads)),
		LoadStart:        [3]*float64{f(h.LoadStart), f(h.Load5Start), f(h.Load15Start)},
		LoadEnd:          [3]*float64{f(h.LoadEnd), f(h.Load5End), f(h.Load15End)},
		Pressure:         f(h.Pressure), Steal: f(h.Steal), OthersCPUs: f(h.OthersCPUs), Status: h.Status, Reasons: reasons}
}

// manifestChecksum is the manifest's checksum64: none (the key absent)
// for a run without a check.
func manifestChecksum(m Manifest) string {
	if !m.Config.Params.Check {
		return ""
	}
	return FormatChecksum(m.Checksum)
}

// WriteManifest writes m as indented JSON: schema_version, the normalized
// args (defaults resolved: B, elem_size, omp_num_threads), the derived
// parameters, build info, the environment (keys sorted),
// the platform, checksum64 (as in the CSV) and the results row under the
// CSV's column names. The same m always gives the same bytes.
func WriteManifest(w io.Writer, m Manifest) error {
	b := m.Build
	b.BuildTags = slices.Sorted(slices.Values(b.BuildTags))
	if b.BuildTags == nil {
		b.BuildTags = []string{}
	}
	env := m.Env
	if env == nil {
		env = map[string]string{}
	}
	d, args := Derive(m.Config), m.Config
	args.B, args.ElemSize, args.OMPNumThreads = d.B, d.ElemSize, ompNumThreads(args)
	out, err := json.MarshalIndent(manifestJSON{
		SchemaVersion: SchemaVersion,
		Args:          args,
		Derived:       d,
		Build:         b,
		Env:           env,
		Platform:      m.Platform,
		Checksum64:    manifestChecksum(m),
		Host:          manifestHost(m.Row),
		Result:        m.Row,
	}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}
