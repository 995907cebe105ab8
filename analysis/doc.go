// Package analysis is the root of the offline analysis packages: stats (the
// summaries every report prints), graphcalc (one round's edges → every
// node's clock model), offsets and groundtruth (their files and the error
// against the simulator's truth), align (a trace reading → global time),
// combine (per-node traces → one trace) and validate (collective
// happens-before).
package analysis
