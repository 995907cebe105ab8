package realbackend

import (
	"context"
	"log/slog"
	"net/netip"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/harness/cluster"
)

// Options are what a real run takes beyond its scenario (the root's
// harness.Options fields of the same names, which say more).
type Options struct {
	// Cluster, if not nil, runs one node of a multi-host cluster instead
	// of every node in namespaces.
	Cluster *cluster.Node
	// Force runs a scenario that clearly needs more CPU than the machine
	// has, instead of refusing it; the run is then degraded.
	Force bool
	// Key, if not nil, seals every datagram and stream frame.
	Key *auth.Key
	// LogLevel is the least severe record the nodes write to run.log, and
	// LogJSON writes them as JSON lines instead of text.
	LogLevel slog.Level
	LogJSON  bool
	// Attack, if not nil, runs beside a run on one machine once its nodes
	// booted, until ctx ends (tests only): it may open sockets in node i's
	// namespace (enter) and from its address.
	Attack func(ctx context.Context, enter func(i int, f func() error) error, addr func(i int) netip.Addr)
}
