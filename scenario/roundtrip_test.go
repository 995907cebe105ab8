package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// roundTrip checks that Marshal → Parse gives an equal Scenario and that
// marshalling again gives the same bytes. A scenario loaded from a file is
// parsed back in that file's directory, as a file written beside it would
// be (relative paths such as a phasegap workload's costs are joined to it).
// validates checks that s validates and round-trips when want is "", or
// that Validate refuses it with an error starting with want.
func validates(t *testing.T, s *Scenario, want string) {
	t.Helper()
	err := s.Validate()
	switch {
	case want == "" && err != nil:
		t.Fatalf("Validate: %v", err)
	case want == "":
		roundTrip(t, s)
	case err == nil || !strings.HasPrefix(err.Error(), want):
		t.Fatalf("Validate: %v\nwant prefix %q", err, want)
	}
}

func roundTrip(t *testing.T, s *Scenario) {
	t.Helper()
	out, err := s.Marshal()
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	dir := ""
	if s.src != nil {
		dir = s.src.dir
	}
	back, err := parse("marshalled.yaml", out, dir)
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v\n%s", err, out)
	}
	a, b := *s, *back
	a.src, b.src = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip changed the scenario:\nbefore %+v\nafter  %+v\nyaml:\n%s", a, b, out)
	}
	again, err := back.Marshal()
	if err != nil {
		t.Fatalf("Marshal again: %v", err)
	}
	if !bytes.Equal(out, again) {
		t.Fatalf("Marshal is not stable:\n%s\n---\n%s", out, again)
	}
}

func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no library files: %v", err)
	}
	files = append(files, "testdata/full.yaml", "testdata/sync.yaml", "testdata/training.yaml", "testdata/phasegap.yaml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, s)
		})
	}
}

// TestRoundTripBuiltInCode round-trips a scenario built with the exported
// types and helpers rather than parsed.
func TestRoundTripBuiltInCode(t *testing.T) {
	one, hundred := 1, Percent(100)
	s := &Scenario{
		Name: "in-code", Seed: 7, Duration: 3e9, Nodes: 3,
		Clocks:   Clocks{Default: ClockSpec{Offset: UniformOf(-time.Millisecond, time.Millisecond), DriftPPM: NormalOf(0.0, 3)}},
		Topology: Topology{Kind: Ring},
		Links: Links{NICRate: 10_000_000_000, Overrides: []LinkOverride{{From: &one, To: ptr(2), LinkSpec: LinkSpec{
			Loss: &Loss{GEModel: &GEModel{P: 1, OneMinusH: &hundred}},
		}}}},
		Faults:   []Fault{{At: 1e9, Kind: FaultLinkFlap, Between: []int{0, 2}, Down: 1e6, Up: 1e6, Count: 2}},
		Workload: Workload{Kind: WorkloadNone},
		Protocol: Protocol{Kind: ProtocolPing, Interval: 1e8},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
}

// TestReadmeExample parses the full example of scenarios/README.md, so
// that the documentation cannot drift from the schema.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```yaml block")
	}
	s, err := Parse("README.md example", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(s.Seed); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
}

func ptr[T any](v T) *T { return &v }

func TestImpairment(t *testing.T) {
	base := "name: x\nduration: 1s\nnodes: 2\n"
	for _, tc := range []struct {
		line string
		want Impairment
		err  string
	}{
		{"", "", ""},
		{"impairment: auto\n", ImpairAuto, ""},
		{"impairment: netem\n", ImpairNetem, ""},
		{"impairment: userspace\n", ImpairUserspace, ""},
		{"impairment: tbf\n", "", `x.yaml:4: impairment: unknown impairment "tbf"; expected auto, netem or userspace`},
	} {
		s, err := Parse("x.yaml", []byte(base+tc.line))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err = %v, want %s", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if s.Impairment != tc.want {
			t.Errorf("%q: Impairment = %q, want %q", tc.line, s.Impairment, tc.want)
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("x.yaml", out)
		if err != nil || back.Impairment != tc.want {
			t.Errorf("%q: round trip gave %q, %v", tc.line, back.Impairment, err)
		}
	}
}
