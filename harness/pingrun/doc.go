// Package pingrun is the harness's adapter of the ping protocol: every
// node runs a ping.Node, and each completed exchange's NTP offset estimate
// is measured against the world's ground truth at the exchange's midpoint.
// It writes no files; its figures are summary.json's "ping" section
// (Summary).
//
// It imports harness/engine, never the harness root; the root registers
// it by the protocol kind "ping" (harness/adapters.go).
package pingrun
