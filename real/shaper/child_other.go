//go:build !linux

package shaper

// MaybeChild makes this process a shaper child when it was started as
// one; only Linux starts shaper processes, so here it returns at once.
func MaybeChild() {}
