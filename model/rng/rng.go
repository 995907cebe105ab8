// Package rng derives independent, named random streams from one seed.
//
// Every component of a simulation draws from its own stream, named after
// what it models ("link/3/7", "clock/2/wander", "node/5/program"). A
// stream's seed is a hash of the run's seed and the name alone, so adding a
// component, or drawing more from one stream, never shifts another
// component's draws.
package rng

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// Seeds returns the two PCG seed words of the stream called name under seed.
func Seeds(seed uint64, name string) (uint64, uint64) {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(name))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16])
}

// Stream returns the random stream called name under seed. Two calls with
// the same arguments return generators that produce the same sequence.
func Stream(seed uint64, name string) *rand.Rand {
	s1, s2 := Seeds(seed, name)
	return rand.New(rand.NewPCG(s1, s2))
}
