package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Skew is one collective's spread of the ranks' start times: for each
// invocation (the k-th of the key on every node), the latest start minus
// the earliest, before correction (each node's own clock) and after (the
// combined trace).
type Skew struct {
	Key                  string
	Invocations          int
	RawP50, RawMax       float64 // ns
	CombinedP50, CombMax float64 // ns
}

// tracesFile is the harness's list of a traced run's per-node traces.
type tracesFile struct {
	Traces []struct {
		Node int    `json:"node"`
		File string `json:"file"`
	} `json:"traces"`
}

// loadSkew computes Skew from traces.json's per-node XSpace traces and
// combined.xplane.pb, when the run has both.
func (r *Run) loadSkew() error {
	if !r.exists("traces.json") || !r.exists("combined.xplane.pb") {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "traces.json"))
	if err != nil {
		return fmt.Errorf("collective skew: %w", err)
	}
	var tf tracesFile
	if err := json.Unmarshal(b, &tf); err != nil {
		return fmt.Errorf("collective skew: read traces.json: %w", err)
	}
	var raw []validate.Node
	for _, t := range tf.Traces {
		if filepath.Ext(t.File) != ".pb" || filepath.Base(t.File) != t.File {
			continue
		}
		space, err := xspace.Read(filepath.Join(r.Dir, t.File))
		if err != nil {
			return fmt.Errorf("collective skew: %w", err)
		}
		raw = append(raw, combine.Collectives(space, t.Node, t.File)...)
	}
	space, err := xspace.Read(filepath.Join(r.Dir, "combined.xplane.pb"))
	if err != nil {
		return fmt.Errorf("collective skew: %w", err)
	}
	comb := combine.Collectives(space, 0, "combined.xplane.pb")
	rawS, combS := spreads(raw), spreads(comb)
	keys := make([]string, 0, len(rawS))
	for k := range rawS {
		if _, ok := combS[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		rs, cs := rawS[k], combS[k]
		r.Skew = append(r.Skew, Skew{Key: k, Invocations: min(len(rs), len(cs)),
			RawP50: lowerMedian(rs), RawMax: slices.Max(rs), CombinedP50: lowerMedian(cs), CombMax: slices.Max(cs)})
	}
	return nil
}

// spreads gives, per collective key, the spread of the start times of
// each invocation that at least two nodes have (the k-th invocation of
// the key on each node, in start order).
func spreads(nodes []validate.Node) map[string][]float64 {
	starts := map[string][][]int64{} // key → node → starts
	for _, n := range nodes {
		per := map[string][]int64{}
		for _, op := range n.Ops {
			per[op.Key] = append(per[op.Key], op.StartNs)
		}
		for k, s := range per {
			slices.Sort(s)
			starts[k] = append(starts[k], s)
		}
	}
	out := map[string][]float64{}
	for k, byNode := range starts {
		if len(byNode) < 2 {
			continue
		}
		n := slices.Max(lens(byNode))
		for i := range n {
			lo, hi, have := int64(0), int64(0), 0
			for _, s := range byNode {
				if i >= len(s) {
					continue
				}
				if have == 0 || s[i] < lo {
					lo = s[i]
				}
				if have == 0 || s[i] > hi {
					hi = s[i]
				}
				have++
			}
			if have >= 2 {
				out[k] = append(out[k], float64(hi-lo))
			}
		}
		if len(out[k]) == 0 {
			delete(out, k)
		}
	}
	return out
}

func lens(s [][]int64) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = len(v)
	}
	return out
}

// lowerMedian is the middle value of xs (the lower of the two middle
// ones); xs is not changed.
func lowerMedian(xs []float64) float64 { return stats.Select(slices.Clone(xs), (len(xs)-1)/2) }
