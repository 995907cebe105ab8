// Package syncrun is the harness's adapter of the sync protocol: it runs
// package rounds on every node of the probe graph and records a sync run's
// files (offsets.jsonl, rounds.jsonl, probes.bin, truth.jsonl; rotated and
// continued in a run until stopped), measures them against the world's
// ground truth into summary.json's "sync" section (SyncSummary), and
// re-runs the estimators offline (Estimate, Calibrate). With the training
// workload (NewTraced) it also runs the workload and the snapshot sampler
// on every node, writes each node's XSpace (and Kineto) trace, combines
// them and checks them into summary.json's "trace" section (TraceSummary).
//
// It imports harness/engine, never the harness root; the root registers
// it by the protocol kind "sync" and by the workload kind "training" with
// it (harness/adapters.go), hands it the run's hooks (engine.Hooked) and,
// for a run until stopped, its run log (engine.InPlacer).
package syncrun
