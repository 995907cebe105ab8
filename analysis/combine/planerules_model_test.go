package combine

import (
	"slices"
	"strings"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

// A model of which planes of an XSpace xprof's trace viewer shows, read
// from openxla/xprof's and XLA's tsl profiler sources (no code taken):
//
//   - tslViewer: the "trace_viewer" tool (xprof/convert/xplane_to_tools_data.cc
//     calls tsl's ConvertXSpaceToTraceEventsString,
//     xla/tsl/profiler/convert/xplane_to_trace_events.cc): the plane named
//     exactly /host:CPU (FindPlaneWithName) as the host; then the planes
//     starting /device:GPU:, or when there is none /device:TPU:, or when
//     there is none /device:CUSTOM:, each as a device with process id
//     kFirstDeviceId (1) + the plane's id.
//   - streamingViewer: "trace_viewer@", the default
//     (xprof/convert/xplane_to_trace_container.cc,
//     ConvertXSpaceToTraceEventsContainer): every plane whose name starts
//     with /host:CPU (FindPlanesWithPrefix), sorted by name, as hosts with
//     ids from kHostThreadsDeviceId (701) on; the planes starting
//     /device:GPU:, or when there is none /device:TPU:, as devices with id
//     1 + the plane's id, an id past kLastDeviceId (500) folded onto 1; and
//     always the /device:CUSTOM: planes, with ids 501 + the plane's id.
//
// Constants: xla/tsl/profiler/utils/xplane_schema.cc (the prefixes) and
// trace_utils.h (the ids).
type xprofViewer int

const (
	tslViewer xprofViewer = iota
	streamingViewer
)

func (v xprofViewer) String() string {
	if v == tslViewer {
		return "trace_viewer"
	}
	return "trace_viewer@"
}

// shownPlane is a plane the viewer shows: as the host or a device, with
// its process id.
type shownPlane struct {
	plane *xplanepb.XPlane
	host  bool
	pid   uint32
}

// xprofShows lists the planes of space that v shows, in its order.
func xprofShows(space *xplanepb.XSpace, v xprofViewer) []shownPlane {
	var out []shownPlane
	withPrefix := func(prefix string) []*xplanepb.XPlane {
		var ps []*xplanepb.XPlane
		for _, p := range space.Planes {
			if strings.HasPrefix(p.Name, prefix) {
				ps = append(ps, p)
			}
		}
		return ps
	}
	devicePid := func(p *xplanepb.XPlane) uint32 {
		pid := uint32(1 + p.Id)
		if v == streamingViewer && pid > 500 {
			pid = 1
		}
		return pid
	}
	if v == tslViewer {
		for _, p := range space.Planes {
			if p.Name == hostCPU {
				out = append(out, shownPlane{plane: p, host: true, pid: 701})
				break
			}
		}
	} else {
		hosts := withPrefix(hostCPU)
		slices.SortStableFunc(hosts, func(a, b *xplanepb.XPlane) int { return strings.Compare(a.Name, b.Name) })
		for i, p := range hosts {
			out = append(out, shownPlane{plane: p, host: true, pid: uint32(701 + i)})
		}
	}
	devices := withPrefix(gpuPrefix)
	if len(devices) == 0 {
		devices = withPrefix(tpuPrefix)
	}
	if len(devices) == 0 && v == tslViewer {
		devices = withPrefix(customPrefix)
	}
	for _, p := range devices {
		out = append(out, shownPlane{plane: p, pid: devicePid(p)})
	}
	if v == streamingViewer {
		for _, p := range withPrefix(customPrefix) {
			out = append(out, shownPlane{plane: p, pid: uint32(501 + p.Id)})
		}
	}
	return out
}

// eventCount is the number of events on a plane's lines.
func eventCount(p *xplanepb.XPlane) int {
	n := 0
	for _, l := range p.Lines {
		n += len(l.Events)
	}
	return n
}
