package scenario

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/netem"
)

// TestLinkPresets pins the presets' names, order and fields.
func TestLinkPresets(t *testing.T) {
	want := []string{"none", "lat_1ms", "lat_10ms", "jitter_5ms_2ms", "loss_0.1", "bw_100mbit"}
	if got := LinkPresets(); !reflect.DeepEqual(got, want) {
		t.Fatalf("LinkPresets() = %v; want %v", got, want)
	}
	LinkPresets()[0] = "changed"
	if LinkPresets()[0] != "none" {
		t.Fatal("LinkPresets returns the package's own slice")
	}
	tests := []struct {
		name string
		want LinkSpec
		link netem.Params // what the preset resolves to
	}{
		{"none", LinkSpec{Preset: "none"}, netem.Params{}},
		{"lat_1ms", LinkSpec{Preset: "lat_1ms", Delay: ptr(time.Millisecond)}, netem.Params{Delay: time.Millisecond}},
		{"lat_10ms", LinkSpec{Preset: "lat_10ms", Delay: ptr(10 * time.Millisecond)}, netem.Params{Delay: 10 * time.Millisecond}},
		{"jitter_5ms_2ms", LinkSpec{Preset: "jitter_5ms_2ms", Delay: ptr(5 * time.Millisecond), Jitter: ptr(2 * time.Millisecond)},
			netem.Params{Delay: 5 * time.Millisecond, Jitter: 2 * time.Millisecond}},
		{"loss_0.1", LinkSpec{Preset: "loss_0.1", Loss: &Loss{Random: ptr(Percent(0.1))}},
			netem.Params{Loss: netem.Loss{Model: netem.LossRandom, Probability: 0.001}}},
		{"bw_100mbit", LinkSpec{Preset: "bw_100mbit", Rate: &Rate{BitsPerSecond: 100_000_000}},
			netem.Params{Rate: netem.Rate{BitsPerSecond: 100_000_000}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name != want[i] {
				t.Fatalf("test %d is %s; want the presets in order", i, tt.name)
			}
			got, ok := LinkPreset(tt.name)
			if !ok || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("LinkPreset(%q) = %+v, %v; want %+v", tt.name, got, ok, tt.want)
			}
			if p := got.params(); !reflect.DeepEqual(p, tt.link) {
				t.Errorf("resolves to %+v; want %+v", p, tt.link)
			}
			// Each call returns its own values.
			if got.Delay != nil {
				*got.Delay = time.Hour
			}
			if got.Loss != nil {
				got.Loss.Random = nil
			}
			if again, _ := LinkPreset(tt.name); !reflect.DeepEqual(again, tt.want) {
				t.Errorf("a changed result changed the preset: %+v", again)
			}
		})
	}
	if l, ok := LinkPreset("lat_2ms"); ok || !reflect.DeepEqual(l, LinkSpec{}) {
		t.Errorf("LinkPreset(lat_2ms) = %+v, %v; want nothing", l, ok)
	}
}

// TestPresetDecode checks that a preset's fields are filled in and that
// the fields written beside it replace them, in any order, in the default
// and in overrides; and that every such scenario round-trips.
func TestPresetDecode(t *testing.T) {
	ms := func(n int) *time.Duration { return ptr(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name string
		link string // the flow mapping of links.default
		want LinkSpec
	}{
		{"preset alone", "{preset: jitter_5ms_2ms}", LinkSpec{Preset: "jitter_5ms_2ms", Delay: ms(5), Jitter: ms(2)}},
		{"field after", "{preset: jitter_5ms_2ms, jitter: 1ms}", LinkSpec{Preset: "jitter_5ms_2ms", Delay: ms(5), Jitter: ms(1)}},
		{"field before", "{delay: 7ms, preset: jitter_5ms_2ms}", LinkSpec{Preset: "jitter_5ms_2ms", Delay: ms(7), Jitter: ms(2)}},
		{"field equal to the preset's", "{preset: lat_1ms, delay: 1ms}", LinkSpec{Preset: "lat_1ms", Delay: ms(1)}},
		{"none with a field", "{preset: none, delay: 20us}", LinkSpec{Preset: "none", Delay: ptr(20 * time.Microsecond)}},
		{"another field", "{preset: lat_10ms, limit: 50}", LinkSpec{Preset: "lat_10ms", Delay: ms(10), Limit: ptr(50)}},
		{"a block replaces the preset's", "{preset: loss_0.1, loss: {random: 1%, correlation: 25%}}",
			LinkSpec{Preset: "loss_0.1", Loss: &Loss{Random: ptr(Percent(1)), Correlation: ptr(Percent(25))}}},
		{"rate with cross traffic", "{preset: bw_100mbit, cross_traffic: {kind: poisson, load: 50%}}",
			LinkSpec{Preset: "bw_100mbit", Rate: &Rate{BitsPerSecond: 100_000_000}, CrossTraffic: &CrossTraffic{Kind: netem.CrossPoisson, Load: 50}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(withHead("links:", "  default: "+tt.link)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Links.Default, tt.want) {
				t.Errorf("links.default = %+v; want %+v", s.Links.Default, tt.want)
			}
			r := mustResolve(t, s, s.Seed)
			if !reflect.DeepEqual(r.Edges[0].Link, tt.want.params()) {
				t.Errorf("edge %+v; want %+v", r.Edges[0].Link, tt.want.params())
			}
			roundTrip(t, s)

			// The same spec in an override, over a default delay.
			s, err = Parse("x.yaml", []byte(withHead("links:", "  default: {delay: 3ms, jitter: 1us}", "  overrides:",
				"    - "+strings.Replace(tt.link, "{", "{from: 0, to: 1, ", 1))))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Links.Overrides[0].LinkSpec; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("override = %+v; want %+v", got, tt.want)
			}
			roundTrip(t, s)
		})
	}
}

// TestMarshalPreset checks that Marshal writes a preset's name and only
// the fields that differ from the preset's.
func TestMarshalPreset(t *testing.T) {
	tests := []struct {
		link, want string
	}{
		{"{preset: jitter_5ms_2ms, jitter: 1ms}", "  default:\n    preset: jitter_5ms_2ms\n    jitter: 1ms\n"},
		{"{preset: jitter_5ms_2ms, jitter: 2ms, delay: 5ms}", "  default:\n    preset: jitter_5ms_2ms\n"},
		{"{preset: none}", "  default:\n    preset: none\n"},
		{"{preset: loss_0.1, loss: {random: 0.1%, correlation: 5%}}", "    preset: loss_0.1\n    loss:\n      random: 0.1%\n      correlation: 5%\n"},
	}
	for _, tt := range tests {
		s, err := Parse("x.yaml", []byte(withHead("links:", "  default: "+tt.link)))
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), tt.want+"workload:") {
			t.Errorf("%s: Marshal wrote\n%s\nwant it to contain\n%s", tt.link, out, tt.want)
		}
	}
}

// TestPresetBuiltInCode checks specs built in code from LinkPreset: one
// with a field replaced round-trips; a preset the code names wrongly, or
// whose field it clears, is refused, since no file could say so.
func TestPresetBuiltInCode(t *testing.T) {
	jitter, _ := LinkPreset("jitter_5ms_2ms")
	jitter.Jitter = ptr(time.Millisecond)
	cleared, _ := LinkPreset("lat_10ms")
	cleared.Delay = nil
	tests := []struct {
		name string
		link LinkSpec
		err  string // "" if valid
	}{
		{"replaced field", jitter, ""},
		{"unknown preset", LinkSpec{Preset: "lat_2ms"},
			`links.default.preset: unknown link preset "lat_2ms"; expected one of none, lat_1ms, lat_10ms, jitter_5ms_2ms, loss_0.1, bw_100mbit`},
		{"cleared field", cleared,
			`links.default.delay: delay is not set, but preset "lat_10ms" sets it; expected the preset's value (LinkPreset) or another in its place`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Scenario{Name: "in-code", Seed: 1, Duration: time.Second, Nodes: 2, Topology: Topology{Kind: FullMesh},
				Links:    Links{Default: tt.link, Overrides: []LinkOverride{{Between: []int{0, 1}, LinkSpec: tt.link}}},
				Workload: Workload{Kind: WorkloadNone}, Protocol: Protocol{Kind: ProtocolPing, Interval: time.Second}}
			err := s.Validate()
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.err == "":
				roundTrip(t, s)
			case err == nil || !strings.HasPrefix(err.Error(), tt.err):
				t.Fatalf("Validate: %v\nwant prefix %q", err, tt.err)
			}
		})
	}
}
