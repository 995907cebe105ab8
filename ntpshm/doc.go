// Package ntpshm feeds a local NTP daemon (chrony, ntpd, ntpsec) with
// global time through the NTP shared-memory reference clock: the SysV
// shared-memory segment that gpsd and ptp4l's ntpshm servo write and that
// chrony reads with `refclock SHM <unit>`.
//
// # The segment
//
// Unit u is the SysV segment of key KeyBase + u (0x4E545030, "NTP0", plus
// u), holding one struct shmTime as ntpd's refclock_shm.c and gpsd's
// ntpshm.h define it:
//
//	struct shmTime {
//	    int          mode;                 // 1: the count protocol below
//	    volatile int count;
//	    time_t       clockTimeStampSec;    // the reference: global time
//	    int          clockTimeStampUSec;
//	    time_t       receiveTimeStampSec;  // the local CLOCK_REALTIME then
//	    int          receiveTimeStampUSec;
//	    int          leap;
//	    int          precision;            // log2 seconds
//	    int          nsamples;
//	    volatile int valid;
//	    unsigned     clockTimeStampNSec;
//	    unsigned     receiveTimeStampNSec;
//	    int          dummy[8];
//	};
//
// 96 bytes on a 64-bit Linux (time_t of 8 bytes, aligned to 8); the field
// offsets are the constants Off*, and the tests check them against the C
// compiler. The package builds on 64-bit Linux only; elsewhere Open
// returns an error.
//
// # Writing: mode 1
//
// Segment.Write sets mode 1, clears valid, increments count, writes the
// fields, increments count again and sets valid last, every store atomic
// (sequentially consistent in Go's memory model: they reach memory in
// program order). chrony copies the segment, then
// takes the copy only if valid is set and (mode 1) the count it copied
// equals the count after the copy, and clears valid: a copy taken during
// a write sees valid clear or a count that moved, and is dropped, never
// half-read.
//
// # From a clock model
//
// FromModel turns a node's clock model (an offsets.Offset) and a reading of
// the node's clock, taken at the same instant as a CLOCK_REALTIME reading,
// into a Sample: ClockTime is global time at that instant, ReceiveTime the
// CLOCK_REALTIME reading. chrony sees ClockTime − ReceiveTime as how far
// global time is ahead of the host's clock. See docs/node-service.md
// (section 3) for the chrony.conf lines and the caveats.
package ntpshm
