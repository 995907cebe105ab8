// Package analysis is the root of the packages that read what runs write:
// stats (the summaries every report prints), offsets and groundtruth (the
// clock models' files and their error and calibration against the
// simulator's truth), align (a trace reading → global time), combine
// (per-node traces → one trace) and validate (collective happens-before).
// GraphCalc, which the master runs online, lives at the top level
// (graphcalc).
package analysis
