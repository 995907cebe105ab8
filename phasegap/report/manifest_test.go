package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
)

func testManifest(row Row) Manifest {
	return Manifest{
		Config: testConfig(),
		Build: BuildInfo{GoVersion: "go1.26.8", Compiler: "gc", GitSHA: "abc123",
			BuildTags: []string{"mpi", "linux"}},
		Env: map[string]string{"OMP_PROC_BIND": "true", "OMPI_MCA_btl": "self,vader",
			"OMP_NUM_THREADS": "2", "MPICH_ASYNC_PROGRESS": "0"},
		Platform: PlatformInfo{Sysname: "Linux", Nodename: "host,a", Machine: "x86_64",
			CPUModel: "Test CPU", LogicalCPUs: 8, PhysicalCores: 4},
		Checksum: 0xfeed,
		Row:      row,
	}
}

func TestWriteManifest(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteManifest(&buf, testManifest(sampleRow())); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var keys []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, `  "`) { // top-level keys, in written order
			k, _, _ := strings.Cut(strings.TrimPrefix(line, `  "`), `"`)
			keys = append(keys, k)
		}
	}
	wantKeys := []string{"schema_version", "args", "derived", "build", "env", "platform", "checksum64", "result"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("top-level keys %q, want %q", keys, wantKeys)
	}
	derived := m["derived"].(map[string]any)
	for k, want := range map[string]any{"B": 1.0, "msg_bytes": 2048.0, "bytes_total": 4096.0,
		"interior_points": 998.0, "boundary_points": 2.0, "halo_valid": true, "elem_size": 8.0} {
		if derived[k] != want {
			t.Errorf("derived.%s = %v, want %v", k, derived[k], want)
		}
	}
	args := m["args"].(map[string]any)
	if args["mode"] != "phase_nb" || args["halo"] != 256.0 || args["omp_bind"] != true || args["trace_detail"] != "thread" ||
		args["B"] != 1.0 || args["elem_size"] != 8.0 || args["omp_num_threads"] != 2.0 { // defaults resolved
		t.Errorf("args = %v", args)
	}
	if m["checksum64"] != "0x000000000000feed" {
		t.Errorf("checksum64 = %v", m["checksum64"])
	}
	if tags := m["build"].(map[string]any)["build_tags"]; !reflect.DeepEqual(tags, []any{"linux", "mpi"}) {
		t.Errorf("build_tags = %v, want sorted", tags)
	}
	if res := m["result"].(map[string]any); res["t_wait_mean_max"] != 6.0 || res["schema_version"] != 1.0 {
		t.Errorf("result = %v", res)
	}
	envAt := func(k string) int { return strings.Index(out, `"`+k+`"`) }
	if !(envAt("MPICH_ASYNC_PROGRESS") < envAt("OMPI_MCA_btl") && envAt("OMPI_MCA_btl") < envAt("OMP_NUM_THREADS") &&
		envAt("OMP_NUM_THREADS") < envAt("OMP_PROC_BIND")) {
		t.Errorf("env not sorted:\n%s", out)
	}
}

func TestDerive(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want Derived
	}{
		{Config{Params: params.Params{Settings: params.Settings{N: 100, Halo: 4, Radius: 2, Timesteps: 2}}},
			Derived{B: 4, ElemSize: 8, MsgBytes: 32, BytesTotal: 64, InteriorPoints: 92, BoundaryPoints: 8, HaloValid: true}},
		{Config{Params: params.Params{Settings: params.Settings{N: 100, Halo: 3, Radius: 2, Timesteps: 2}},
			ElemSize: 4},
			Derived{B: 4, ElemSize: 4, MsgBytes: 12, BytesTotal: 24, InteriorPoints: 92, BoundaryPoints: 8}},
		{Config{Params: params.Params{Settings: params.Settings{N: 6, Halo: 8, Radius: 1, Timesteps: 1}},
			B: 4}, // explicit B; N < 2B
			Derived{B: 4, ElemSize: 8, MsgBytes: 64, BytesTotal: 128, InteriorPoints: 0, BoundaryPoints: 6, HaloValid: true}},
	} {
		if got := Derive(tc.cfg); got != tc.want {
			t.Errorf("Derive(%+v) = %+v, want %+v", tc.cfg, got, tc.want)
		}
	}
}
