package kineto

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/xspace"
)

// TestFlowStats: flow events become "flow" stats (id<<2 | direction) on
// the slices Chrome binds them to.
func TestFlowStats(t *testing.T) {
	const slices3 = `{"ph":"X","name":"outer","pid":1,"tid":1,"ts":10,"dur":100},
	{"ph":"X","name":"inner","pid":1,"tid":1,"ts":20,"dur":10},
	{"ph":"X","name":"later","pid":1,"tid":1,"ts":200,"dur":10},
	{"ph":"X","name":"other thread","pid":1,"tid":2,"ts":20,"dur":10}`
	for _, tc := range []struct {
		name  string
		flows string
		want  []string // slice=flow values, in slice order
	}{
		{"s binds to the innermost enclosing slice", `{"ph":"s","id":5,"pid":1,"tid":1,"ts":25,"bp":"e"}`,
			[]string{"inner=22"}},
		{"s at a slice's start", `{"ph":"s","id":5,"pid":1,"tid":1,"ts":20}`, []string{"inner=22"}},
		{"s outside inner binds to outer", `{"ph":"s","id":5,"pid":1,"tid":1,"ts":50}`, []string{"outer=22"}},
		{"f with bp e encloses", `{"ph":"f","id":5,"pid":1,"tid":1,"ts":25,"bp":"e"}`, []string{"inner=21"}},
		{"f without bp: the next slice", `{"ph":"f","id":5,"pid":1,"tid":1,"ts":150}`, []string{"later=21"}},
		{"t steps", `{"ph":"t","id":5,"pid":1,"tid":1,"ts":25}`, []string{"inner=23"}},
		{"both ends on one slice", `{"ph":"s","id":5,"pid":1,"tid":1,"ts":25},{"ph":"f","id":5,"pid":1,"tid":1,"ts":26,"bp":"e"}`,
			[]string{"inner=23"}},
		{"two flows on one slice", `{"ph":"s","id":5,"pid":1,"tid":1,"ts":25},{"ph":"f","id":6,"pid":1,"tid":1,"ts":26,"bp":"e"}`,
			[]string{"inner=22", "inner=25"}},
		{"string id", `{"ph":"s","id":"7","pid":1,"tid":1,"ts":25}`, []string{"inner=30"}},
		{"no enclosing slice", `{"ph":"s","id":5,"pid":1,"tid":1,"ts":150}`, nil},
		{"other thread", `{"ph":"s","id":5,"pid":1,"tid":3,"ts":25}`, nil},
		{"id beyond 56 bits", `{"ph":"s","id":72057594037927936,"pid":1,"tid":1,"ts":25}`, nil},
		{"no id", `{"ph":"s","pid":1,"tid":1,"ts":25}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := `{"traceEvents":[` + slices3 + `,` + tc.flows + `]}`
			tr, err := DecodeWith(strings.NewReader(trace), "t.json", DecodeOptions{Raw: true})
			if err != nil {
				t.Fatal(err)
			}
			space, err := ToXSpace(tr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			p := space.Planes[0]
			for _, l := range p.Lines {
				for _, ev := range l.Events {
					for _, st := range ev.Stats {
						if p.StatMetadata[st.MetadataId].GetName() == StatFlow {
							got = append(got, fmt.Sprintf("%s=%s", p.EventMetadata[ev.MetadataId].GetName(), xspace.StatString(p, st)))
						}
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("flow stats %q, want %q", got, tc.want)
			}
		})
	}
}
