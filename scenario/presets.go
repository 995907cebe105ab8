package scenario

import (
	"reflect"
	"strings"
	"time"
)

// presetNames are the link presets, in the order LinkPresets lists them.
var presetNames = []string{"none", "lat_1ms", "lat_10ms", "jitter_5ms_2ms", "loss_0.1", "bw_100mbit"}

// LinkPresets returns the names of the link presets: the PhaseGap plan's
// impairment presets, named link settings that a link spec can start from
// with the key preset (see [LinkPreset]).
func LinkPresets() []string {
	return append([]string(nil), presetNames...)
}

// LinkPreset returns the link settings of the PhaseGap plan's impairment
// preset called name, with Preset set to name, and whether there is such a
// preset:
//
//   - none: no fields (netem's defaults: an ideal link);
//   - lat_1ms: delay 1ms;
//   - lat_10ms: delay 10ms;
//   - jitter_5ms_2ms: delay 5ms, jitter 2ms (netem's "delay 5ms 2ms");
//   - loss_0.1: loss random 0.1%;
//   - bw_100mbit: rate 100mbit.
//
// Every call returns new pointers, which the caller may change.
func LinkPreset(name string) (LinkSpec, bool) {
	l := LinkSpec{Preset: name}
	switch name {
	case "none":
	case "lat_1ms":
		l.Delay = ptrTo(time.Millisecond)
	case "lat_10ms":
		l.Delay = ptrTo(10 * time.Millisecond)
	case "jitter_5ms_2ms":
		l.Delay, l.Jitter = ptrTo(5*time.Millisecond), ptrTo(2*time.Millisecond)
	case "loss_0.1":
		l.Loss = &Loss{Random: ptrTo(Percent(0.1))}
	case "bw_100mbit":
		l.Rate = &Rate{BitsPerSecond: 100_000_000}
	default:
		return LinkSpec{}, false
	}
	return l, true
}

// presetList is the list of preset names for error messages.
func presetList() string { return strings.Join(presetNames, ", ") }

func ptrTo[T any](v T) *T { return &v }

// unpreset returns l without the fields that equal its preset's, which
// the decoder fills in from the preset: what Marshal writes beside the
// key preset. A spec without a known preset is returned as it is.
func (l LinkSpec) unpreset() LinkSpec {
	p, ok := LinkPreset(l.Preset)
	if !ok {
		return l
	}
	drop(&l.Delay, p.Delay)
	drop(&l.Jitter, p.Jitter)
	drop(&l.DelayCorrelation, p.DelayCorrelation)
	drop(&l.Distribution, p.Distribution)
	drop(&l.Loss, p.Loss)
	drop(&l.Duplicate, p.Duplicate)
	drop(&l.DuplicateCorrelation, p.DuplicateCorrelation)
	drop(&l.Corrupt, p.Corrupt)
	drop(&l.CorruptCorrelation, p.CorruptCorrelation)
	drop(&l.Reorder, p.Reorder)
	drop(&l.Rate, p.Rate)
	drop(&l.Limit, p.Limit)
	drop(&l.CrossTraffic, p.CrossTraffic)
	return l
}

// drop clears *dst if the preset sets the field and *dst has its value.
func drop[T any](dst **T, preset *T) {
	if *dst != nil && preset != nil && reflect.DeepEqual(**dst, *preset) {
		*dst = nil
	}
}

// presetUnset returns the keys of the fields that l's preset sets but l
// leaves nil, which no file can write: a spec built in code must keep the
// preset's fields (or replace them) for Marshal to round-trip it.
func (l LinkSpec) presetUnset() []string {
	p, ok := LinkPreset(l.Preset)
	if !ok {
		return nil
	}
	var keys []string
	for _, f := range []struct {
		key         string
		preset, set bool
	}{
		{"delay", p.Delay != nil, l.Delay != nil},
		{"jitter", p.Jitter != nil, l.Jitter != nil},
		{"delay_correlation", p.DelayCorrelation != nil, l.DelayCorrelation != nil},
		{"distribution", p.Distribution != nil, l.Distribution != nil},
		{"loss", p.Loss != nil, l.Loss != nil},
		{"duplicate", p.Duplicate != nil, l.Duplicate != nil},
		{"duplicate_correlation", p.DuplicateCorrelation != nil, l.DuplicateCorrelation != nil},
		{"corrupt", p.Corrupt != nil, l.Corrupt != nil},
		{"corrupt_correlation", p.CorruptCorrelation != nil, l.CorruptCorrelation != nil},
		{"reorder", p.Reorder != nil, l.Reorder != nil},
		{"rate", p.Rate != nil, l.Rate != nil},
		{"limit", p.Limit != nil, l.Limit != nil},
		{"cross_traffic", p.CrossTraffic != nil, l.CrossTraffic != nil},
	} {
		if f.preset && !f.set {
			keys = append(keys, f.key)
		}
	}
	return keys
}
