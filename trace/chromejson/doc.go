// Package chromejson writes the values of Chrome trace-event JSON exactly:
// times in microseconds as decimals from integer nanoseconds or
// picoseconds (never through float64), strings, and floats that read back
// bit for bit; every writer of Chrome JSON in chronosync (the combiner's
// export, the simulated Kineto traces, their re-timed copies and
// PhaseGap's trace) formats its values here, so that a time means the same
// digits in all of them.
//
// Each writer keeps its own layout (the order of an event's members, the
// white space of its document), which the files it writes have always had;
// what this package owns is the text of each value.
package chromejson
