// Package params holds PhaseGap's parameters: the Params type, their
// defaults, their bounds and the field table that names each one once
// (its key, flag, help and bounds). The CLI's flags, a scenario's phasegap
// section and a sweep file's base all loop over Fields, so that a
// parameter is declared, defaulted, bounded and documented here and
// nowhere else.
//
// The package is a leaf: it imports only the standard library, so that
// the scenario schema can use it without the benchmark behind it.
package params
