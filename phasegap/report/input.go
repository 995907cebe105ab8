package report

import "github.com/chronosync/chronosync/phasegap/params"

// SchemaVersion is the value of the CSV's schema_version column and of
// manifest.json's schema_version.
const SchemaVersion = 1

// TraceSchemaVersion is trace.json's otherData.trace_schema_version.
const TraceSchemaVersion = 1

// DefaultElemSize is sizeof(double), used when Config.ElemSize is 0.
const DefaultElemSize = 8

// Sample is one measured iteration of one rank; times in ns on the rank's
// clock, relative to the run's time zero. Only measured iterations belong
// here: the caller drops the warmup.
//
// The phase durations follow the plan's definitions. Post is the phase
// before the interior (packing and posting the exchange); it ends at
// InteriorStart. Wait is the completion window: MPI_Waitall in the
// nonblocking modes, the blocking exchange call itself in phase_blk (so
// there Wait == CommWindow, and overlap_ratio is 0). Poll is the time the
// interior's master thread spent inside MPI_Test* (nb_test), which lies
// inside the interior phase: Interior includes Poll.
type Sample struct {
	Iter  int   // iteration number (any increasing numbering)
	Start int64 // iteration start

	Post, Interior, Wait, Boundary, Poll, CommWindow, Total int64 // durations (Total = t_iter)

	CommStart, CommEnd                      int64 // t_comm_window's ends (absolute, same clock as Start)
	InteriorStart, WaitStart, BoundaryStart int64 // phase starts, for the trace

	TestCalls, WaitCalls int // MPI_Test* and MPI_Wait* calls this iteration
	PollsToComplete      int // polls (tests) until one found both halos complete; 0 when none did (no polling, or it ended in Waitall)

	Threads []Span // per-thread interior spans (thread id = index), for trace_detail thread; may be nil
}

// Span is a [Start, End) interval in ns on the rank's clock.
type Span struct{ Start, End int64 }

// Rank is what one rank measured.
type Rank struct {
	Rank    int
	Samples []Sample
	// PureComm holds comm-window durations (ns) of exchanges run with no
	// compute (a calibration pass): t_pure of OSU and IMB-NBC, base_t of SMB.
	PureComm []int64
	// PureWork holds interior durations (ns) run with no communication in
	// flight (a calibration pass): SMB's work_t. Optional: without it, the
	// overlapped run's interior minus its polling stands in.
	PureWork []int64
	// Checksum is the rank's checksum of its owned points.
	Checksum uint64
	// CPUs is how many CPUs the rank's process may run on (its
	// affinity: mpirun's binding); 0 when unknown (a model's rank).
	CPUs int
	// CPUSeconds is the CPU time (user and system) the rank's process
	// used over its run; 0 when unknown.
	CPUSeconds float64
}

// Config is the run's normalized configuration: the benchmark's
// parameters, and what the run's transport and environment add.
// manifest.json's args write it (MarshalJSON); results.csv and the trace
// report it.
type Config struct {
	// Params are the benchmark's parameters, normalized: Radius is the
	// kernel's when the run set none. A run without the checksum (the
	// models) leaves Check, CheckEvery and PoisonGhost zero.
	Params params.Params

	B                  int    // boundary width; 0 means R*S
	MPIThreadRequested string // mpi_thread
	MPIThreadProvided  string
	OMPBind            bool
	OMPPlaces          string
	OMPNumThreads      int // what the OpenMP runtime reports; 0 means T
	Trace              bool
	TraceIters         int
	TraceDetail        string
	Transport          string
	OutDir             string
	RunID              string
	CSV                string
	CSVMode            string
	Manifest           bool

	Platform   string
	Hostname   string
	GitSHA     string
	Timestamp  string // given by the caller, never read here
	MPIImpl    string
	MPIVersion string
	Impairment string
	ElemSize   int // bytes per element; 0 means 8
}

// Derived holds the parameters that follow from a Config.
type Derived struct {
	B              int   `json:"B"`               // R*S unless Config.B is set
	ElemSize       int   `json:"elem_size"`       // bytes
	MsgBytes       int64 `json:"msg_bytes"`       // H*elem_size, per neighbor and direction
	BytesTotal     int64 `json:"bytes_total"`     // 2*msg_bytes sent per iteration
	InteriorPoints int   `json:"interior_points"` // [B, N-B), empty when N < 2B
	BoundaryPoints int   `json:"boundary_points"` // the first and last B owned points
	HaloValid      bool  `json:"halo_valid"`      // H >= B, the correctness invariant
}

// Derive computes the derived parameters of cfg.
func Derive(cfg Config) Derived {
	p := &cfg.Params
	d := Derived{B: cfg.B, ElemSize: cfg.ElemSize}
	if d.B == 0 {
		d.B = p.Radius * p.Timesteps
	}
	if d.ElemSize == 0 {
		d.ElemSize = DefaultElemSize
	}
	d.MsgBytes = int64(p.Halo) * int64(d.ElemSize)
	d.BytesTotal = 2 * d.MsgBytes
	d.InteriorPoints = max(0, p.N-2*d.B)
	d.BoundaryPoints = max(0, p.N-d.InteriorPoints)
	d.HaloValid = p.Halo >= d.B
	return d
}

// Finish sets the phase durations and the comm window from the phase
// starts, the comm window's ends and end, the iteration's end: the
// definitions every transport shares.
func (s *Sample) Finish(end int64) {
	s.Post = s.InteriorStart - s.Start
	s.Interior = s.WaitStart - s.InteriorStart
	s.Wait = s.BoundaryStart - s.WaitStart
	s.Boundary = end - s.BoundaryStart
	s.Total = end - s.Start
	s.CommWindow = s.CommEnd - s.CommStart
}
