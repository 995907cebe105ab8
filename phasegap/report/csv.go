package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/infile"
)

// cell is one formatted value; raw marks a JSON literal (a number or a
// boolean; null when s is "").
type cell struct {
	s   string
	raw bool
}

func str(s string) cell    { return cell{s: s} }
func integer(v int64) cell { return cell{s: strconv.FormatInt(v, 10), raw: true} }
func boolean(v bool) cell  { return cell{s: strconv.FormatBool(v), raw: true} }

// num formats v as encoding/json formats a float64 (shortest round-trip
// digits, 'f' notation unless |v| < 1e-6 or >= 1e21); a non-finite v is an
// empty cell.
func num(v float64) cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return cell{raw: true}
	}
	f, a := byte('f'), math.Abs(v)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		f = 'e'
	}
	return cell{s: strconv.FormatFloat(v, f, -1, 64), raw: true}
}

// column is one CSV column: its name and how a row fills it.
type column struct {
	name string
	val  func(r *Row) cell
}

// avgMax gives the _mean_avg and _mean_max columns of one phase.
func avgMax(phase string, f func(r *Row) AvgMax) []column {
	return []column{
		{phase + "_mean_avg", func(r *Row) cell { return num(f(r).Avg) }},
		{phase + "_mean_max", func(r *Row) cell { return num(f(r).Max) }},
	}
}

// columns is the single source of the CSV's names, order and values: the
// plan's "Suggested CSV columns" in its order, then this package's extras.
var columns = csvColumns()

// csvColumns lists the CSV's columns. The parameters' names and values
// come from params.Fields: mode and progress follow run_id, the OpenMP
// schedule and chunk follow omp_places, and the others follow in the
// table's order, with B after timesteps.
func csvColumns() []column {
	run, _ := resultFields("mode", "progress")
	omp, _ := resultFields("omp_schedule", "omp_chunk")
	_, rest := resultFields("mode", "progress", "omp_schedule", "omp_chunk")
	shape, work := splitAfter(rest, "timesteps")
	return concat(
		[]column{
			{"schema_version", func(r *Row) cell { return integer(SchemaVersion) }},
			{"platform", func(r *Row) cell { return str(r.Config.Platform) }},
			{"hostname", func(r *Row) cell { return str(r.Config.Hostname) }},
			{"git_sha", func(r *Row) cell { return str(r.Config.GitSHA) }},
			{"timestamp", func(r *Row) cell { return str(r.Config.Timestamp) }},
			{"run_id", func(r *Row) cell { return str(r.Config.RunID) }},
		},
		paramColumns(run),
		[]column{
			{"transport", func(r *Row) cell { return str(r.Config.Transport) }},
			{"impairment", func(r *Row) cell { return str(r.Config.Impairment) }},
			{"mpi_impl", func(r *Row) cell { return str(r.Config.MPIImpl) }},
			{"mpi_version", func(r *Row) cell { return str(r.Config.MPIVersion) }},
			{"mpi_thread_requested", func(r *Row) cell { return str(r.Config.MPIThreadRequested) }},
			{"mpi_thread_provided", func(r *Row) cell { return str(r.Config.MPIThreadProvided) }},
			{"omp_num_threads", func(r *Row) cell { return integer(int64(ompNumThreads(r.Config))) }},
			{"omp_proc_bind", func(r *Row) cell { return boolean(r.Config.OMPBind) }},
			{"omp_places", func(r *Row) cell { return str(r.Config.OMPPlaces) }},
		},
		paramColumns(omp),
		paramColumns(shape),
		[]column{{"B", func(r *Row) cell { return integer(int64(r.B)) }}},
		paramColumns(work),
		[]column{
			{"t_iter_mean", func(r *Row) cell { return num(r.TIterMean) }},
			{"t_iter_p50", func(r *Row) cell { return num(r.TIterP50) }},
			{"t_iter_p95", func(r *Row) cell { return num(r.TIterP95) }},
		},
		avgMax("t_post", func(r *Row) AvgMax { return r.TPost }),
		avgMax("t_interior", func(r *Row) AvgMax { return r.TInterior }),
		avgMax("t_wait", func(r *Row) AvgMax { return r.TWait }),
		avgMax("t_boundary", func(r *Row) AvgMax { return r.TBoundary }),
		avgMax("t_poll", func(r *Row) AvgMax { return r.TPoll }),
		[]column{
			{"wait_frac", func(r *Row) cell { return num(r.WaitFrac) }},
			{"wait_skew", func(r *Row) cell { return num(r.WaitSkew) }},
			{"overlap_ratio", func(r *Row) cell { return num(r.OverlapRatio) }},
			{"mpi_test_calls_mean", func(r *Row) cell { return num(r.MPITestCallsMean) }},
			{"mpi_wait_calls_mean", func(r *Row) cell { return num(r.MPIWaitCallsMean) }},
			{"polls_to_complete_p95", func(r *Row) cell { return num(r.PollsToCompleteP95) }},
			{"checksum64", checksumCell},
			{"msg_bytes", func(r *Row) cell { return integer(r.MsgBytes) }},
			{"bytes_total", func(r *Row) cell { return integer(r.BytesTotal) }},
			{"bw_effective", func(r *Row) cell { return num(r.BWEffective) }},
			// Extras, beyond the plan.
			{"t_iter_mean_max", func(r *Row) cell { return num(r.TIterMeanMax) }},
		},
		avgMax("t_comm_window", func(r *Row) AvgMax { return r.TCommWindow }),
		[]column{
			{"polls_to_complete_mean", func(r *Row) cell { return num(r.PollsToCompleteMean) }},
			{"t_pure_comm_mean", func(r *Row) cell { return num(r.TPureCommMean) }},
			{"osu_overlap_pct", func(r *Row) cell { return num(r.OSUOverlapPct) }},
			{"imb_nbc_overlap_pct", func(r *Row) cell { return num(r.IMBNBCOverlapPct) }},
			{"smb_availability_pct", func(r *Row) cell { return num(r.SMBAvailabilityPct) }},
			// Appended later (schema_version 1 still: a reader takes a
			// header that is a prefix of these columns).
			{"t_iter_p50_max", func(r *Row) cell { return num(r.TIterPct.P50.Max) }},
			{"t_iter_p95_max", func(r *Row) cell { return num(r.TIterPct.P95.Max) }},
		},
		pctColumns("t_post", func(r *Row) Pct { return r.TPostPct }),
		pctColumns("t_interior", func(r *Row) Pct { return r.TInteriorPct }),
		pctColumns("t_wait", func(r *Row) Pct { return r.TWaitPct }),
		pctColumns("t_boundary", func(r *Row) Pct { return r.TBoundaryPct }),
		pctColumns("t_poll", func(r *Row) Pct { return r.TPollPct }),
		pctColumns("t_comm_window", func(r *Row) Pct { return r.TCommWindowPct }),
		[]column{
			{"imb_nbc_t_ovrl", func(r *Row) cell { return num(r.IMBTOvrl) }},
			{"imb_nbc_t_pure", func(r *Row) cell { return num(r.IMBTPure) }},
			{"imb_nbc_t_cpu", func(r *Row) cell { return num(r.IMBTCPU) }},
			{"smb_iter_t", func(r *Row) cell { return num(r.SMBIterT) }},
			{"smb_work_t", func(r *Row) cell { return num(r.SMBWorkT) }},
			{"smb_base_t", func(r *Row) cell { return num(r.SMBBaseT) }},
			// Appended with issue 35's hiding figure and records.
			{"hidden_frac", func(r *Row) cell { return num(r.HiddenFrac) }},
			{"polls_completed_frac", func(r *Row) cell { return num(r.PollsCompletedFrac) }},
		},
		hostColumns(),
	)
}

// hostColumns are the machine's conditions (Row.Host, Row.RankCPUs):
// empty cells for a run that did not measure them.
func hostColumns() []column {
	host := func(f func(r *Row) cell) func(r *Row) cell {
		return func(r *Row) cell {
			if !r.Host.Measured {
				return cell{raw: true}
			}
			return f(r)
		}
	}
	return []column{
		{"host_cpus", host(func(r *Row) cell { return integer(int64(r.Host.CPUs)) })},
		{"rank_cpus", func(r *Row) cell {
			if r.RankCPUs <= 0 {
				return cell{raw: true}
			}
			return integer(int64(r.RankCPUs))
		}},
		{"oversubscription", host(func(r *Row) cell {
			return num(r.Host.Oversubscription(r.Config.Params.Ranks, r.Config.Params.Threads))
		})},
		{"load1_start", host(func(r *Row) cell { return num(r.Host.LoadStart) })},
		{"load1_end", host(func(r *Row) cell { return num(r.Host.LoadEnd) })},
		{"cpu_pressure", host(func(r *Row) cell { return num(r.Host.Pressure) })},
		{"cpu_steal", host(func(r *Row) cell { return num(r.Host.Steal) })},
		{"others_cpus", host(func(r *Row) cell { return num(r.Host.OthersCPUs) })},
		{"status", host(func(r *Row) cell { return str(r.Host.Status) })},
		{"degraded_reason", host(func(r *Row) cell { return str(r.Host.Reason()) })},
	}
}

// pctColumns gives the _p50_avg, _p50_max, _p95_avg and _p95_max
// columns of one phase.
func pctColumns(phase string, f func(r *Row) Pct) []column {
	return []column{
		{phase + "_p50_avg", func(r *Row) cell { return num(f(r).P50.Avg) }},
		{phase + "_p50_max", func(r *Row) cell { return num(f(r).P50.Max) }},
		{phase + "_p95_avg", func(r *Row) cell { return num(f(r).P95.Avg) }},
		{phase + "_p95_max", func(r *Row) cell { return num(f(r).P95.Max) }},
	}
}

// checksumCell is the checksum, or an empty cell (JSON null) for a run
// without one (--check 0, or a model run): never 0x0000000000000000,
// which would read as a value.
func checksumCell(r *Row) cell {
	if !r.Config.Params.Check {
		return cell{raw: true}
	}
	return str(FormatChecksum(r.Checksum64))
}

func concat(parts ...[]column) []column {
	var out []column
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ompNumThreads is the OpenMP thread count reported, T when unknown.
func ompNumThreads(c Config) int {
	if c.OMPNumThreads > 0 {
		return c.OMPNumThreads
	}
	return c.Params.Threads
}

// FormatChecksum writes a checksum as the CSV and manifest carry it,
// "0x" and 16 hex digits, so that no reader takes it for a lossy number.
func FormatChecksum(c uint64) string { return fmt.Sprintf("0x%016x", c) }

// Columns returns the CSV header: schema_version, the plan's suggested
// columns in the plan's order, then the extras.
func Columns() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.name
	}
	return out
}

// record formats r in column order.
func (r *Row) record() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.val(r).s
	}
	return out
}

// WriteCSV writes rows (after the header when header is true) with
// encoding/csv's quoting and "\n" line ends.
func WriteCSV(w io.Writer, rows []Row, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		if err := cw.Write(Columns()); err != nil {
			return err
		}
	}
	for i := range rows {
		if err := cw.Write(rows[i].record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// AppendCSV appends row to the CSV file at path (csv_mode append), creating
// it with the header when it is new or empty, in a single write to a file
// opened O_APPEND so that concurrent appenders' lines do not interleave. It
// refuses to append to a file whose header is not Columns(): rows of
// another schema would be misread. (Two appenders that both find the file
// empty both write a header; append from one process per run.)
func AppendCSV(path string, row Row) error {
	var head bytes.Buffer
	if err := WriteCSV(&head, nil, true); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if st.Size() == 0 {
		buf.Write(head.Bytes())
	} else if err := checkHeader(path, head.Bytes()); err != nil {
		return err
	}
	if err := WriteCSV(&buf, []Row{row}, false); err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return err
	}
	return f.Close()
}

// checkHeader reports whether the file at path starts with want.
func checkHeader(path string, want []byte) error {
	f, err := infile.Open(path, infile.Results)
	if err != nil {
		return err
	}
	defer f.Close()
	got := make([]byte, len(want))
	n, _ := io.ReadFull(f, got)
	if !bytes.Equal(got[:n], want) {
		first, _, _ := strings.Cut(string(got[:n]), "\n")
		return fmt.Errorf("report: %s: header %.80q... is not schema_version %d's; write to a new file", path, first, SchemaVersion)
	}
	return nil
}

// MarshalJSON writes the row as one JSON object with the CSV's column names
// in the CSV's order; numbers and booleans are JSON literals, an empty
// numeric cell is null.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range columns {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c.name)
		b.Write(k)
		b.WriteByte(':')
		v := c.val(&r)
		switch {
		case v.raw && v.s == "":
			b.WriteString("null")
		case v.raw:
			b.WriteString(v.s)
		default:
			s, _ := json.Marshal(v.s)
			b.Write(s)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
