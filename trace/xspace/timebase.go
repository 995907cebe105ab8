package xspace

import "github.com/chronosync/chronosync/trace/xplanepb"

// StatTimeBase names a plane stat (int64) that gives the Unix time, in ns,
// that the plane's timestamps count from: an event of the plane happened at
// time_base_ns + [StartPs]/1000 ns on its clock. XSpace times are int64 ps
// and so reach only ±106 days, too little for Unix-epoch timestamps; a plane
// converted from a trace with epoch timestamps (such as a PyTorch profiler
// trace, see package kineto) carries its base in this stat. A plane without
// it counts from 0.
const StatTimeBase = "time_base_ns"

// TimeBase returns the plane's [StatTimeBase] stat (an int64 or uint64
// value), and whether it has one.
func TimeBase(p *xplanepb.XPlane) (int64, bool) {
	st, ok := StatByName(p, p.GetStats(), StatTimeBase)
	if !ok {
		return 0, false
	}
	switch v := st.GetValue().(type) {
	case *xplanepb.XStat_Int64Value:
		return v.Int64Value, true
	case *xplanepb.XStat_Uint64Value:
		return int64(v.Uint64Value), true
	}
	return 0, false
}
