package netem

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MaxJitter is the largest jitter netem's tabledist accepts (INT_MAX
// nanoseconds, about 2.147 s); the kernel silently caps larger values,
// Validate rejects them.
const MaxJitter = time.Duration(math.MaxInt32)

// Validate reports every parameter that netem (or tc, where the kernel
// would accept nonsense) would refuse, and every field set for a feature
// that is off, which is a configuration mistake rather than a choice. The
// error joins one message per problem, each naming the field and quoting
// its value.
func (p Params) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("netem: "+format, args...))
	}
	prob := func(name string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad("%s = %v: a probability must be in [0, 1]", name, v)
		}
	}

	if p.Delay < 0 {
		bad("Delay = %v: negative", p.Delay)
	}
	if p.Jitter < 0 {
		bad("Jitter = %v: negative", p.Jitter)
	} else if p.Jitter > MaxJitter {
		bad("Jitter = %v: exceeds netem's maximum %v", p.Jitter, MaxJitter)
	}
	prob("DelayCorr", p.DelayCorr)
	switch p.Distribution {
	case "", Uniform, Normal, Pareto, ParetoNormal:
	default:
		bad("Distribution = %q: want uniform, normal, pareto or paretonormal", p.Distribution)
	}

	errs = append(errs, p.Loss.validate()...)

	prob("Duplicate", p.Duplicate)
	prob("DuplicateCorr", p.DuplicateCorr)
	prob("Corrupt", p.Corrupt)
	prob("CorruptCorr", p.CorruptCorr)
	prob("Reorder", p.Reorder)
	prob("ReorderCorr", p.ReorderCorr)
	if p.ReorderGap < 0 || p.ReorderGap > math.MaxInt32 {
		bad("ReorderGap = %d: want 0 (the default) or a positive packet count", p.ReorderGap)
	} else if p.ReorderGap > 0 && p.Reorder == 0 {
		bad("ReorderGap = %d without a Reorder probability (tc refuses \"gap\" without \"reorder\")", p.ReorderGap)
	}

	errs = append(errs, p.Rate.validate()...)

	if p.Limit < 0 || p.Limit > math.MaxInt32 {
		bad("Limit = %d: want 0 (netem's default, 1000) or a positive packet count", p.Limit)
	}

	errs = append(errs, p.Cross.validate(p.Rate.BitsPerSecond)...)
	return errors.Join(errs...)
}

func (l Loss) validate() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("netem: Loss."+format, args...))
	}
	prob := func(name string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad("%s = %v: a probability must be in [0, 1]", name, v)
		}
	}
	random := l.Probability != 0 || l.Correlation != 0
	state := l.P13 != 0 || l.P31 != 0 || l.P32 != 0 || l.P23 != 0 || l.P14 != 0
	ge := l.P != 0 || l.R != 0 || l.OneMinusH != 0 || l.OneMinusK != 0
	unused := func(set bool, fields string) {
		if set {
			bad("%s set, but Model is %q", fields, l.Model)
		}
	}
	switch l.Model {
	case LossNone:
		unused(random, "Probability/Correlation")
		unused(state, "P13/P31/P32/P23/P14")
		unused(ge, "P/R/OneMinusH/OneMinusK")
	case LossRandom:
		prob("Probability", l.Probability)
		prob("Correlation", l.Correlation)
		unused(state, "P13/P31/P32/P23/P14")
		unused(ge, "P/R/OneMinusH/OneMinusK")
	case LossState:
		prob("P13", l.P13)
		prob("P31", l.P31)
		prob("P32", l.P32)
		prob("P23", l.P23)
		prob("P14", l.P14)
		if l.P13+l.P14 > 1 {
			bad("P13 + P14 = %v + %v: exceeds 1", l.P13, l.P14)
		}
		if l.P31+l.P32 > 1 {
			bad("P31 + P32 = %v + %v: exceeds 1", l.P31, l.P32)
		}
		unused(random, "Probability/Correlation")
		unused(ge, "P/R/OneMinusH/OneMinusK")
	case LossGEModel:
		prob("P", l.P)
		prob("R", l.R)
		prob("OneMinusH", l.OneMinusH)
		prob("OneMinusK", l.OneMinusK)
		unused(random, "Probability/Correlation")
		unused(state, "P13/P31/P32/P23/P14")
	default:
		bad("Model = %q: want \"\", random, state or gemodel", l.Model)
	}
	return errs
}

func (r Rate) validate() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("netem: Rate."+format, args...))
	}
	switch {
	case r.BitsPerSecond == 0:
		if r.PacketOverhead != 0 || r.CellSize != 0 || r.CellOverhead != 0 {
			bad("PacketOverhead/CellSize/CellOverhead set without BitsPerSecond")
		}
	case r.BitsPerSecond < 8:
		bad("BitsPerSecond = %d: netem's rate is in whole bytes per second, want at least 8", r.BitsPerSecond)
	}
	if r.PacketOverhead < math.MinInt32 || r.PacketOverhead > math.MaxInt32 {
		bad("PacketOverhead = %d: out of netem's 32-bit range", r.PacketOverhead)
	}
	if r.CellSize < 0 || r.CellSize > math.MaxInt32 {
		bad("CellSize = %d: want 0 (none) or a positive byte count", r.CellSize)
	}
	if r.CellOverhead < math.MinInt32 || r.CellOverhead > math.MaxInt32 {
		bad("CellOverhead = %d: out of netem's 32-bit range", r.CellOverhead)
	}
	return errs
}

func (c CrossTraffic) validate(bitsPerSecond uint64) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("netem: Cross."+format, args...))
	}
	switch c.Kind {
	case CrossNone:
		if c.Load != 0 || c.PacketSize != 0 || c.On != 0 || c.Off != 0 {
			bad("Load/PacketSize/On/Off set, but Kind is none")
		}
		return errs
	case CrossPoisson:
		if c.On != 0 || c.Off != 0 {
			bad("On/Off = %v/%v: only for Kind %q", c.On, c.Off, CrossOnOff)
		}
	case CrossOnOff:
		if c.On <= 0 || c.Off <= 0 {
			bad("On/Off = %v/%v: on/off traffic needs both mean periods > 0", c.On, c.Off)
		}
	default:
		bad("Kind = %q: want \"\", poisson or onoff", c.Kind)
	}
	if bitsPerSecond == 0 {
		bad("Kind = %q without a rate: cross traffic needs Rate.BitsPerSecond > 0", c.Kind)
	}
	if !(c.Load > 0) || math.IsInf(c.Load, 0) {
		bad("Load = %v: want a fraction of the link rate > 0", c.Load)
	}
	if c.PacketSize < 0 {
		bad("PacketSize = %d: negative", c.PacketSize)
	}
	return errs
}
