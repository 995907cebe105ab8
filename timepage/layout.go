// Package timepage publishes a node's clock model in a shared-memory page
// so that local processes (tracers, profilers) turn their clock readings
// into global time without locks and without talking to the node.
//
// The page is 4 KiB, little-endian, with a versioned header, a seqlock
// sequence and a checksum over the model (see the layout constants and
// docs/node-service.md, section 2). A Publisher writes it through a Page: a
// VirtualPage (a plain byte array, for the simulator: deterministic, no OS
// clock, no goroutines) or a FilePage (a file under /dev/shm mapped with
// mmap, for real nodes). A Reader reads it with the seqlock and verifies
// the checksum; include/chronosync_time.h (C) and tools/chronosync_time.py
// (Python) read the same page the same way.
//
// The model is analysis/offsets.Offset's, for readings after the window's
// clock steps:
//
//	global_ns = local_ns - offset_ns - drift_ppm*1e-6*(local_ns - window_start_ns) - (1 - drift_ppm*1e-6)*step_sum_ns
//	sigma_ns  = sqrt(sigma_ns^2 + (drift_sigma_ppm*1e-6*(local_ns - (window_start_ns+window_end_ns)/2))^2 + step_var_ns2)
//
// and, for a reading before steps_end_ns (it may lie before some step,
// which the page cannot tell), (step_abs_sum_ns*|1 - drift_ppm*1e-6|)^2
// added to the variance: it covers whichever steps the reading is after.
package timepage

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Layout of the page: byte offsets of its fields. Every multi-byte field is
// little-endian. The header (magic to Pid) is written once when the page is
// created; the model region [OffModel, OffModel+ModelBytes) is written under
// the seqlock, and Checksum covers it.
const (
	// PageSize is the size of the page in bytes.
	PageSize = 4096
	// Magic is the uint32 at OffMagic: the bytes "CSTP".
	Magic = 0x50545343
	// Version is the layout version at OffVersion. A reader refuses any
	// other.
	Version = 1

	OffMagic    = 0  // uint32 Magic
	OffVersion  = 4  // uint32 Version
	OffSize     = 8  // uint32 PageSize
	OffPid      = 12 // uint32 the publisher's process id (0 in the simulator)
	OffSeq      = 16 // uint64 seqlock sequence: odd while the model is being written; 0: never published
	OffChecksum = 24 // uint64 Checksum of the model region

	OffModel       = 32  // start of the model region
	OffRoundID     = 32  // uint64 round the model comes from
	OffWindowID    = 40  // uint64 its window
	OffWindowStart = 48  // int64 window_start_ns, local clock
	OffWindowEnd   = 56  // int64 window_end_ns, local clock
	OffOffset      = 64  // float64 offset_ns at window_start_ns
	OffDrift       = 72  // float64 drift_ppm
	OffSigma       = 80  // float64 sigma_ns: 1σ of the offset at the window's middle
	OffDriftSigma  = 88  // float64 drift_sigma_ppm
	OffStepSum     = 96  // float64 step_sum_ns: sum of the window's step sizes
	OffStepVar     = 104 // float64 step_var_ns2: sum of the squares of their 1σ
	OffStepAbsSum  = 112 // float64 step_abs_sum_ns: sum of |size|
	OffStepsEnd    = 120 // int64 steps_end_ns: readings at or after it are after every step
	OffValidUntil  = 128 // int64 valid_until_ns: after it (local clock) the model is stale
	OffPublished   = 136 // int64 published_ns: local clock when it was published
	OffNodeID      = 144 // int32 node id
	OffReference   = 148 // int32 reference node (whose clock is global time)
	OffClockID     = 152 // int32 the local clock the model applies to (0: CLOCK_REALTIME)
	OffStatus      = 156 // uint16 Status
	OffStepCount   = 158 // uint16 number of steps in the window (saturates at 65535)

	// ModelBytes is the length of the model region.
	ModelBytes = 128
	// ModelWords is ModelBytes in 64-bit words.
	ModelWords = ModelBytes / 8
)

// ClockRealtime is the clock id of CLOCK_REALTIME, the only local clock a
// node publishes a model for today.
const ClockRealtime = 0

// Status is the node's verdict on the model it publishes.
type Status uint16

// Status values. StatusNone is a page never published.
const (
	StatusNone Status = iota
	// StatusOK: the round was solved and the model is current.
	StatusOK
	// StatusDegraded: the model is served, but something is off (nodes
	// missing, the self-check failing, an inconsistent round); σ is honest.
	StatusDegraded
	// StatusFailed: the node has no model it stands behind; readers get
	// ErrFailed (the last model's values still come with it).
	StatusFailed
)

// String names s.
func (s Status) String() string {
	switch s {
	case StatusNone:
		return "none"
	case StatusOK:
		return "ok"
	case StatusDegraded:
		return "degraded"
	case StatusFailed:
		return "failed"
	}
	return fmt.Sprintf("status(%d)", uint16(s))
}

// Checksum is the checksum of the model region, given as its ModelWords
// little-endian 64-bit words: four FNV-1a-style lanes (word i goes to lane
// i mod 4: lane = (lane XOR word) * 0x100000001b3, lane j seeded with
// 0xcbf29ce484222325 XOR j), folded as lane0 ^ rotl(lane1,17) ^
// rotl(lane2,31) ^ rotl(lane3,47) and finished with murmur3's fmix64 step
// (h ^= h>>33; h *= 0xff51afd7ed558ccd; h ^= h>>33). The C and Python
// readers compute the same.
func Checksum(w *[ModelWords]uint64) uint64 {
	const prime = 0x100000001b3
	const seed = 0xcbf29ce484222325
	l0, l1, l2, l3 := uint64(seed), uint64(seed^1), uint64(seed^2), uint64(seed^3)
	for i := 0; i < ModelWords; i += 4 {
		l0 = (l0 ^ w[i]) * prime
		l1 = (l1 ^ w[i+1]) * prime
		l2 = (l2 ^ w[i+2]) * prime
		l3 = (l3 ^ w[i+3]) * prime
	}
	h := l0 ^ bits.RotateLeft64(l1, 17) ^ bits.RotateLeft64(l2, 31) ^ bits.RotateLeft64(l3, 47)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// littleEndian reports whether the host stores integers little-endian, as
// the page's layout does; the page is mapped, not decoded, so a big-endian
// host cannot use it.
func littleEndian() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}
