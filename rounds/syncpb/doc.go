// Package syncpb holds the protobuf messages that the round master and the
// node agents exchange, generated from sync.proto into sync.pb.go.
//
// Do not edit sync.pb.go: change sync.proto and run `make proto`;
// `make proto-check` fails when the committed file is stale. Every message
// goes on the wire inside an [Envelope], framed by package rounds/wire.
//
// Times (the *Ns fields) are int64, not the uint64 of the origin plan,
// because simulated clocks can read negative.
package syncpb
