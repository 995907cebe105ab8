package kineto

import (
	"strconv"
	"strings"
)

// Devices says which events of a trace ran on a GPU, as [ToXSpace] places
// them: an event is on GPU n when its pid is labelled "GPU n" by a
// process_labels metadata event; failing a label, when its category is a
// GPU activity (kernel, gpu_memcpy, gpu_memset, gpu_user_annotation; any
// case) and its "device" arg, else its pid, is an integer n ≥ 0.
//
// Kineto writes a GPU event's times on the host clock, converted by the
// profiler from the GPU's own clock; a host event's are read on the host
// clock directly. A caller that corrects the profiler's conversion applies
// it to the events Devices places on a GPU only.
type Devices struct {
	labels map[string]string // pid → process_labels
}

// NewDevices reads t's process_labels metadata events.
func NewDevices(t *Trace) *Devices {
	d := &Devices{labels: map[string]string{}}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph == "M" && e.Name == "process_labels" {
			d.labels[e.Pid] = e.Args["labels"]
		}
	}
	return d
}

// Device returns the GPU e ran on, and false for a host event.
func (d *Devices) Device(e *Event) (int, bool) {
	if l, ok := d.labels[e.Pid]; ok {
		return gpuLabel(l)
	}
	switch strings.ToLower(e.Cat) {
	case "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation":
	default:
		return 0, false
	}
	if n, err := strconv.Atoi(e.Args["device"]); err == nil && n >= 0 {
		return n, true
	}
	if n, err := strconv.Atoi(e.Pid); err == nil && n >= 0 {
		return n, true
	}
	return 0, false
}
