// Package analysis is the root of the offline analysis packages: stats (the
// summaries every report prints) now; GraphCalc, trace alignment, combine and
// validate as their issues land.
package analysis
