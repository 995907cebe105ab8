package report

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
	PollsToComplete      int // polls before both halos completed (nb_test; 0 otherwise)

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
}

// Config is the run's normalized configuration: every CLI parameter of the
// plan (JSON names are the flags') and the environment the CSV reports.
type Config struct {
	Mode               string `json:"mode"`
	Ranks              int    `json:"ranks"`   // P
	Threads            int    `json:"threads"` // T
	N                  int    `json:"N"`       // local elements per rank
	Halo               int    `json:"halo"`    // H, elements
	Kernel             string `json:"kernel"`
	Radius             int    `json:"radius"` // R, normalized (derived from the kernel when unset)
	Timesteps          int    `json:"timesteps"`
	B                  int    `json:"B"` // boundary width; 0 means R*S
	PollEvery          int    `json:"poll_every"`
	MPIThreadRequested string `json:"mpi_thread"`
	MPIThreadProvided  string `json:"mpi_thread_provided"`
	Progress           string `json:"progress"`
	OMPSchedule        string `json:"omp_schedule"`
	OMPChunk           int    `json:"omp_chunk"`
	OMPBind            bool   `json:"omp_bind"`
	OMPPlaces          string `json:"omp_places"`
	OMPNumThreads      int    `json:"omp_num_threads"` // what the OpenMP runtime reports; 0 means T
	FlopsPerPoint      int    `json:"flops_per_point"`
	BytesPerPoint      int    `json:"bytes_per_point"`
	Iters              int    `json:"iters"`
	Warmup             int    `json:"warmup"`
	Check              bool   `json:"check"`
	CheckEvery         int    `json:"check_every"`
	PoisonGhost        bool   `json:"poison_ghost"`
	Sync               string `json:"sync"`
	Trace              bool   `json:"trace"`
	TraceIters         int    `json:"trace_iters"`
	TraceDetail        string `json:"trace_detail"`
	Transport          string `json:"transport"`
	OutDir             string `json:"out_dir"`
	RunID              string `json:"run_id"`
	CSV                string `json:"csv"`
	CSVMode            string `json:"csv_mode"`
	Manifest           bool   `json:"manifest"`

	Platform   string `json:"platform"`
	Hostname   string `json:"hostname"`
	GitSHA     string `json:"git_sha"`
	Timestamp  string `json:"timestamp"` // given by the caller, never read here
	MPIImpl    string `json:"mpi_impl"`
	MPIVersion string `json:"mpi_version"`
	Impairment string `json:"impairment"`
	ElemSize   int    `json:"elem_size"` // bytes per element; 0 means 8
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
	d := Derived{B: cfg.B, ElemSize: cfg.ElemSize}
	if d.B == 0 {
		d.B = cfg.Radius * cfg.Timesteps
	}
	if d.ElemSize == 0 {
		d.ElemSize = DefaultElemSize
	}
	d.MsgBytes = int64(cfg.Halo) * int64(d.ElemSize)
	d.BytesTotal = 2 * d.MsgBytes
	d.InteriorPoints = max(0, cfg.N-2*d.B)
	d.BoundaryPoints = max(0, cfg.N-d.InteriorPoints)
	d.HaloValid = cfg.Halo >= d.B
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
