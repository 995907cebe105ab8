package scenario

import (
	"math/rand/v2"

	"github.com/chronosync/chronosync/model/rng"
)

// Stream returns the random stream called name under seed: a PCG generator
// seeded with the first 16 bytes of SHA-256(seed as 8 little-endian bytes
// || name). Every random value has its own stream ("scenario/clock/3/offset"),
// so adding a node, a field or a draw never shifts another value's draws.
// The simulator derives its streams the same way (see model/rng), so a name
// means the same stream everywhere.
func Stream(seed uint64, name string) *rand.Rand { return rng.Stream(seed, name) }
