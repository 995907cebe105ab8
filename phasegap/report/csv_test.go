package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// planColumns is the plan's "Suggested CSV columns", literally.
const planColumns = `schema_version,platform,hostname,git_sha,timestamp,run_id
mode,progress,transport,impairment
mpi_impl,mpi_version,mpi_thread_requested,mpi_thread_provided
omp_num_threads,omp_proc_bind,omp_places,omp_schedule,omp_chunk
P,T,N,H,kernel,radius,timesteps,B,flops_per_point,bytes_per_point,iters,warmup,poll_every
t_iter_mean,t_iter_p50,t_iter_p95
t_post_mean_avg,t_post_mean_max
t_interior_mean_avg,t_interior_mean_max
t_wait_mean_avg,t_wait_mean_max
t_boundary_mean_avg,t_boundary_mean_max
t_poll_mean_avg,t_poll_mean_max
wait_frac,wait_skew,overlap_ratio
mpi_test_calls_mean,mpi_wait_calls_mean,polls_to_complete_p95
checksum64,msg_bytes,bytes_total,bw_effective`

const extraColumns = `t_iter_mean_max,t_comm_window_mean_avg,t_comm_window_mean_max,polls_to_complete_mean,t_pure_comm_mean,osu_overlap_pct,imb_nbc_overlap_pct,smb_availability_pct,` +
	// Appended: the phases' percentiles, then IMB's and SMB's inputs.
	`t_iter_p50_max,t_iter_p95_max,` +
	`t_post_p50_avg,t_post_p50_max,t_post_p95_avg,t_post_p95_max,` +
	`t_interior_p50_avg,t_interior_p50_max,t_interior_p95_avg,t_interior_p95_max,` +
	`t_wait_p50_avg,t_wait_p50_max,t_wait_p95_avg,t_wait_p95_max,` +
	`t_boundary_p50_avg,t_boundary_p50_max,t_boundary_p95_avg,t_boundary_p95_max,` +
	`t_poll_p50_avg,t_poll_p50_max,t_poll_p95_avg,t_poll_p95_max,` +
	`t_comm_window_p50_avg,t_comm_window_p50_max,t_comm_window_p95_avg,t_comm_window_p95_max,` +
	`imb_nbc_t_ovrl,imb_nbc_t_pure,imb_nbc_t_cpu,smb_iter_t,smb_work_t,smb_base_t,` +
	// Appended: the hiding figure that can fall, the polls' share, the host.
	`hidden_frac,polls_completed_frac,` +
	`host_cpus,rank_cpus,oversubscription,load1_start,load1_end,cpu_pressure,cpu_steal,others_cpus,status,degraded_reason`

func TestColumns(t *testing.T) {
	want := strings.Split(strings.ReplaceAll(planColumns, "\n", ",")+","+extraColumns, ",")
	if got := Columns(); !reflect.DeepEqual(got, want) {
		t.Errorf("Columns():\n got %q\nwant %q", got, want)
	}
}

func sampleRow() Row {
	r0 := Summarize(Rank{Rank: 0, Samples: []Sample{nb(0, 0, 1, 20, 2, 3, 1, 8)}, PureComm: []int64{5 * us1}})
	r1 := Summarize(Rank{Rank: 1, Samples: []Sample{nb(0, 0, 3, 10, 6, 5, 0, 16)}, PureComm: []int64{7 * us1}})
	return Aggregate(testConfig(), []RankSummary{r0, r1}, 0x0123456789abcdef)
}

func TestWriteCSV(t *testing.T) {
	row := sampleRow()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, []Row{row, row}, true); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || !reflect.DeepEqual(recs[0], Columns()) {
		t.Fatalf("got %d records, header %q", len(recs), recs[0])
	}
	get := map[string]string{}
	for i, name := range recs[0] {
		get[name] = recs[1][i]
	}
	for name, want := range map[string]string{
		"schema_version": "1", "hostname": "host,a", "omp_proc_bind": "true", "omp_num_threads": "2",
		"P": "2", "H": "256", "B": "1", "msg_bytes": "2048", "bytes_total": "4096",
		"checksum64": "0x0123456789abcdef", "t_wait_mean_avg": "4", "t_wait_mean_max": "6",
		"wait_skew": "1.5", "t_post_mean_avg": "2", "bw_effective": "341.3333333333333",
		"t_pure_comm_mean": "6",
	} {
		if got := get[name]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestNumFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1.5, "1.5"}, {1234567.25, "1234567.25"}, {0.1, "0.1"},
		{1e-7, "1e-07"}, {1e21, "1e+21"}, {-2, "-2"},
		{math.NaN(), ""}, {math.Inf(1), ""},
	} {
		if got := num(tc.v).s; got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestAppendCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	row := sampleRow()
	for range 3 {
		if err := AppendCSV(path, row); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	if err := WriteCSV(&want, []Row{row, row, row}, true); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("after 3 appends:\n%s\nwant\n%s", got, want.Bytes())
	}

	// An empty existing file gets the header too.
	empty := filepath.Join(t.TempDir(), "empty.csv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendCSV(empty, row); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(empty); !bytes.HasPrefix(got, []byte("schema_version,platform,")) {
		t.Errorf("empty file: got %.40q...", got)
	}

	// A file of another schema is left alone.
	old := filepath.Join(t.TempDir(), "old.csv")
	if err := os.WriteFile(old, []byte("schema_version,mode\n0,phase_nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendCSV(old, row); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("append to another schema: err = %v", err)
	}
	if got, _ := os.ReadFile(old); string(got) != "schema_version,mode\n0,phase_nb\n" {
		t.Errorf("other schema's file changed: %q", got)
	}
}

func TestRowJSON(t *testing.T) {
	row := sampleRow()
	row.IMBNBCOverlapPct = math.NaN()
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if len(m) != len(Columns()) {
		t.Errorf("%d keys, want %d", len(m), len(Columns()))
	}
	for k, want := range map[string]any{"schema_version": 1.0, "hostname": "host,a", "omp_proc_bind": true,
		"t_wait_mean_max": 6.0, "checksum64": "0x0123456789abcdef", "imb_nbc_overlap_pct": nil} {
		if !reflect.DeepEqual(m[k], want) {
			t.Errorf("%s = %#v, want %#v", k, m[k], want)
		}
	}
	if !bytes.HasPrefix(b, []byte(`{"schema_version":1,"platform":"linux","hostname":"host,a",`)) {
		t.Errorf("keys not in column order: %.80s", b)
	}
}
