package combine

import (
	"strings"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Stat names the combiner adds.
const (
	statNodeID      = "node_id"
	statHostname    = "hostname"
	statClockSkew   = "clock_skew_ns"
	statUncertainty = "clock_uncertainty_ns"
	// statStepInside (int64 1) marks an event that spans a step of its
	// node's host clock (align.AcrossStep); the planes of a node whose
	// offsets record no step never carry it, nor its metadata.
	statStepInside = "clock_step_inside"
	statHloOp      = "hlo_op"
	// statOriginalName (string) is a renamed plane's name in its node's
	// own trace, so that exports can say which node's which device a
	// plane is (processLabel).
	statOriginalName = "original_plane_name"
)

// nodeState accumulates one node's figures while its planes are aligned.
type nodeState struct {
	id    int              // the node whose clock model aligns the input
	rank  int              // the input's id (Input.Node): a Kineto trace's rank
	al    *align.Node      // nil: no correction
	snaps *align.Snapshots // the plane being rewritten's
	// gpuSnaps corrects a Kineto trace's GPU planes (see kinetogpu.go);
	// nil without snapshot pairs.
	gpuSnaps  *align.Snapshots
	offs      *offsets.Index // al's setup, for the line goroutines' own
	md        *NodeMetadata
	sigmas    []float64 // the uncertainty of each timed event
	sigmaMax  float64   // their largest
	firstRaw  int64     // ps of the node's earliest event, and its correction
	firstCorr int64
	haveFirst bool
	ops       []validate.Op
	declared  int    // the most nodes a plane's world_size stat declares; 0: none
	runID     string // the run_id stat of the node's planes; "" without one
	// stepped: the node's offsets record a step of its host clock, so its
	// events may span one (then its planes get statStepInside's metadata).
	stepped bool
	// The plane being rewritten counts its times from inBase (ns, its
	// time_base_ns stat, else 0); the output counts from outBase, the
	// combined trace's base; shift = inBase − outBase.
	inBase, outBase, shift int64
	// sortPos is the input's position in the Chrome JSON's process order
	// (sortPositions).
	sortPos int
}

// setBase sets the time bases of the next plane.
func (ns *nodeState) setBase(in, out int64) {
	ns.inBase, ns.outBase, ns.shift = in, out, in-out
}

// collective reports the hlo_op of an event that is a collective kernel:
// its metadata name contains rccl or nccl (any case) and it carries hlo_op
// (on the event or its metadata).
func collective(p *xplanepb.XPlane, ev *xplanepb.XEvent, hloID int64) (string, bool) {
	md := p.EventMetadata[ev.MetadataId]
	if md == nil {
		return "", false
	}
	name := strings.ToLower(md.Name)
	if !strings.Contains(name, "rccl") && !strings.Contains(name, "nccl") {
		return "", false
	}
	for _, stats := range [][]*xplanepb.XStat{ev.Stats, md.Stats} {
		for _, s := range stats {
			if s.MetadataId == hloID {
				return xspace.StatString(p, s), true
			}
		}
	}
	return "", false
}

// findStat returns the id of the plane's stat metadata named name.
func findStat(p *xplanepb.XPlane, name string) (int64, bool) {
	best, found := int64(0), false
	for id, m := range p.StatMetadata {
		if m.GetName() == name && (!found || id < best) {
			best, found = id, true
		}
	}
	return best, found
}

// statID returns the id of the plane's stat metadata named name, adding it
// (with the next free id) when the plane has none.
func statID(p *xplanepb.XPlane, name string) int64 {
	if id, ok := findStat(p, name); ok {
		return id
	}
	next := int64(1)
	for id := range p.StatMetadata {
		next = max(next, id+1)
	}
	if p.StatMetadata == nil {
		p.StatMetadata = map[int64]*xplanepb.XStatMetadata{}
	}
	p.StatMetadata[next] = &xplanepb.XStatMetadata{Id: next, Name: name}
	return next
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// floorDiv is a/b rounded towards −∞ (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
