// Package clockmodel simulates imperfect clocks in true (virtual) time: a
// host clock S with offset, frequency error, frequency wander, periodic
// variation, steps, read granularity and read noise, and a tracer clock R
// that runs off its host clock with its own offset and rate (and does not
// step when the host clock steps).
//
// Time is int64 nanoseconds of true time, passed in by the caller; the
// package never reads an OS clock, starts no goroutines and draws randomness
// only from the *rand.Rand streams its constructors are given (a stream may
// be nil when its parameter is zero). A Clock or
// Tracer is not safe for concurrent use.
//
// # Decisions
//
//   - Ideal readings are exact integer arithmetic for offset, true time and
//     steps; the fractional part (ppm, wander, periodic) is computed in
//     float64 nanoseconds, as PPM·t/1e6 (dividing by 1e6 rather than
//     multiplying by 1e-6, so that e.g. PPM=100 at t=1s gives exactly
//     1e5 ns), and rounded to the nearest nanosecond once.
//   - Wander is a random walk of the frequency on a fixed grid of true time:
//     the frequency is piecewise constant, starting at 0 on [0, WanderStep)
//     and changing by a normal draw at every multiple of WanderStep, reflected
//     at ±WanderLimitPPM. Its phase is the exact integral: piecewise linear,
//     continuous. Before true time 0 the wander is zero. The walk is drawn
//     lazily, from a PCG seeded with two draws from the wander stream, so it
//     depends only on the seed, never on when or how often the clock is
//     read. Queries may come in any order of t: the walk's state is saved
//     every 256 steps (a few kB per simulated day at the default 1 s step)
//     and a query behind the furthest step reached replays at most 256
//     steps from a checkpoint, bit-identically. WanderStep must be 0 (1 s)
//     or at least 1 ms: a finer frequency walk is phase noise, and costs a
//     draw per step.
//   - The periodic term is integrated analytically, with t reduced modulo
//     the period in integer arithmetic to keep precision for long runs.
//   - Read = Ideal + round(normal noise), quantized down (floor) to the
//     granularity, like a coarse hardware counter. Noise comes from its own
//     stream, so extra reads never shift the wander path. Reads are then
//     clamped so the clock never goes backwards unless its ideal reading
//     did (only a negative step can do that for non-decreasing t): a read
//     returns at least the previous read plus min(0, change of Ideal),
//     quantized down. The clamp acts in call order; it biases the readings
//     upwards slightly when reads come much closer together than the noise.
//   - Steps apply to all readings at true times >= At. [Clock.AddStep]
//     rejects, with an error, a step before the latest true time the clock
//     has been queried at, since readings already handed out would change;
//     a step at exactly that time is accepted (a fault firing "now").
//   - [Clock.TrueAfter] uses the rate at its start time only and ignores
//     steps, which is enough for timers.
package clockmodel
