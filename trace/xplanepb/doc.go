// Package xplanepb holds XSpace, the trace format of the XLA/TSL profiler
// (*.xplane.pb files), generated from xplane.proto into xplane.pb.go.
//
// xplane.proto is chronosync's own, written to be wire compatible with
// XLA/TSL's tsl/profiler/protobuf/xplane.proto: the same proto package
// (tensorflow.profiler), message names, field numbers and types, so that XLA,
// JAX, TensorFlow and xprof read what chronosync writes and the other way
// round. Do not edit xplane.pb.go: change xplane.proto and run `make proto`;
// `make proto-check` fails when the committed file is stale.
//
// Package trace/xspace reads, writes and builds these messages.
package xplanepb
