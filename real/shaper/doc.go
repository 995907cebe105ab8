// Package shaper is the userspace impairment of the real backend: a
// layer-2 relay that applies the simulator's own link model (model/netem) to
// every frame, per direction, in real time.
//
// It is used where the kernel has no netem qdisc. A lab of kind
// netlab.Relay gives every node a veth whose switch-side end has no bridge;
// the shaper opens a packet socket on each of those ports (OpenPacketPort,
// inside the switch namespace) and acts as the switch: it learns source
// MACs, forwards known unicast to its port and floods broadcast, multicast
// and unknown unicast (so ARP works unaided), and passes every copy
// through the directed link from its input node to its output node.
//
// # The link model in real time
//
// Each directed link (from, to) is a *netem.Link with its own random
// stream, rng.Stream(Seed, "link/<from>/<to>"), the name the simulator
// gives the same link, so one scenario and seed mean the same draws on
// both backends. The model's time is nanoseconds since Run started on
// CLOCK_REALTIME (see "Arrival times"), a frame's arrival is the moment
// the kernel received it on its port, and the size charged to a rate
// limit is the frame's length, Ethernet header included (what netem
// charges on an Ethernet device). A corrupted copy has one random bit flipped, as netem does,
// with the position drawn from a separate stream, "link/<from>/<to>/corrupt",
// so that corruption never shifts the model's own draws.
//
// # Arrival times
//
// Each packet port has the kernel stamp every frame when it arrives
// (SO_TIMESTAMPNS, read as a control message with the frame), and that
// stamp, not the moment the relay got round to reading the frame, is the
// frame's time for the link model: a relay that is scheduled late still
// dates the frame right, and only a frame whose release is already past
// when it is read goes out late. Kernel stamps are CLOCK_REALTIME, so the
// shaper's own clock is CLOCK_REALTIME too (time.Now().UnixNano, read
// through the vDSO, minus its value when Run started) rather than the
// monotonic clock with an offset: the stamps and the releases are then
// on one clock with no conversion error, and the applications on the
// nodes, whose timestamps are CLOCK_REALTIME as well, see delays on the
// clock they measure with. NTP slewing changes the rate of the realtime
// and the monotonic clock alike (by at most 500 ppm, 0.5 µs over a 1 ms
// delay), so it does not matter either way; a step of the wall clock
// during a run (settimeofday, chrony's makestep) would shift the copies
// in flight at that moment by the step, and a stamp more than 1 ms ahead
// of the clock (a step back between stamp and read) is replaced by a
// clock read. Frames without a usable stamp, and every frame of a Port
// that is not a packet port (read by a goroutine of its own), are dated
// by a clock read when read; Info counts both kinds.
//
// # Release precision
//
// One scheduler goroutine both reads the packet ports and writes the
// copies: it holds every pending copy in a heap ordered by release time
// and then by the order the model produced them (so the model's order,
// ties included, is kept), and sleeps in one ppoll on the ports and an
// eventfd (for the readers of other ports) until 100 µs before the next
// release. Then it spins on the clock, polling the ports between looks,
// and writes the frame. One thread instead of a reader per port and a
// scheduler means one wake-up per frame, not two. It reads and writes
// the packet ports with raw system calls on buffers of its own, so that
// relaying a frame allocates nothing (TestRelayAllocatesNothing,
// TestPacketPortAllocatesNothing).
//
// When the process may (root, CAP_SYS_NICE), it runs under SCHED_FIFO
// at priority 40, so that a waking frame or timer preempts whatever else
// runs on its CPU; otherwise it stays SCHED_OTHER, which Info.RealTime
// reports and the logger records once. In a shaper child every thread of
// the process runs under SCHED_FIFO (see "A process of its own"), and the
// goroutine runs on whichever the Go scheduler gives it; in any other
// process (New and Run called directly, as tests do), the goroutine is
// locked to a thread of its own, with a timer slack of 1 ns, and only
// that thread is made SCHED_FIFO. A SCHED_FIFO thread that spins owns
// its CPU, so the spinning is bounded: at most 100 µs per release, and
// at most 5 ms in any 10 ms (Info.SpinCapped counts the releases slept
// for instead); the kernel's RT throttling (95% of each second) is only
// the last resort. Without SCHED_FIFO the spinning yields the CPU
// (sched_yield) between looks.
//
// Measured on the 2-core VM this was written on (TestMeasuredUnderLoad,
// a 50 µs ± 5 µs link, a datagram every 0.5 ms) with a CPU hog process
// on every core, |measured - modelled| one-way delay was 6 to 15 µs at
// the median and 26 to 65 µs at the 99th percentile over 9 runs, and the
// release lateness 0.3 to 0.6 µs at the median and 6 to 42 µs at the
// 99th; the same code without SCHED_FIFO gave 1 ms at the median and 5 to
// 170 ms at the 99th, and the former design (a reader goroutine per port
// dating frames by a clock read, a SCHED_OTHER scheduler) 1.1 to 1.8 ms
// and 5 to 26 ms. Nothing here helps against CPU steal, which stalls the
// whole VM for milliseconds now and then. A copy due at once (a link
// without delay) goes out when the thread has woken and read its frame,
// typically 5 to 10 µs after it arrived.
//
// # A process of its own
//
// The real backend runs the shaper in a child process (StartProcess: the
// program's own executable, made a shaper by MaybeChild), not beside the
// nodes. The thread needs one of its process's GOMAXPROCS processor
// slots to run Go code: in one process with the nodes' event loops it
// woke, now and then, to find every slot busy with CPU-bound goroutines
// (estimator fits, GraphCalc) or stopped for the garbage collector, and
// waited up to the Go scheduler's 10 ms time slice, or a whole GC cycle,
// for one. real2-onoff then saw releases 10 to 70 ms late (p99 0.7 to
// 1 ms per link) and chronosync's p99 error went from 1 µs to 7 µs or
// 17 ms in some runs; more slots made it worse (idle slots run GC
// workers). In a child whose only busy goroutine is the shaper's the same
// scenario gives p99 lateness 7 to 75 µs.
//
// The release goroutine still depends on the child's Go runtime: on its
// locks, on a free processor slot when it returns from a system call
// whose slot was taken meanwhile, on every slot reaching a safe point
// when the world stops (a garbage collection does, twice a cycle). So no
// thread of the child may be one that the kernel leaves without a CPU
// for long:
//
//   - Every thread of the child runs under SCHED_FIFO (setProcessRealTime,
//     where the process may), the Go runtime's too, so that whatever the
//     release goroutine waits for in the runtime runs at once; and the
//     goroutine is not locked to a thread, so that when the runtime
//     preempts it (as it does any goroutine that runs for 10 ms without
//     blocking) the same thread takes it up again, instead of waking
//     another to hand it back (7.5 µs at the median instead of 57 µs,
//     or 88 µs with SCHED_OTHER threads, beside two CPU hogs).
//   - The collector is off (GOGC=off, with a memory limit of 1 GiB as
//     the guard against a leak): relaying allocates nothing, and
//     Info.GCCycles reports any cycle that ran all the same.
//   - The spinners that keep the CPUs awake (below) run in a process of
//     their own.
//
// Until 2026-11-24 the spinners were threads of the child itself, each
// holding a processor slot, and they are SCHED_IDLE: beside two CPU
// hogs the kernel ran them only now and then, for 10 ms to over a
// second. Every time the runtime preempted one (every 10 ms), its thread
// then held its slot, and sometimes the scheduler's lock, until the
// kernel ran it again (execution trace: 83 holds over 1 ms in 10 s, the
// longest 80 ms), and every stop of the world waited for them (gctrace:
// a collection's first stop took 155 ms and 1.55 s). The release
// goroutine waited with them: real2-onoff beside two hogs had release
// lateness p99 125 to 330 ms, max 0.3 to 0.6 s (up to 1.5 s with a
// collection), where it now has p99 21 to 23 µs, max 2.4 to 3.5 ms
// (BenchmarkShaperLoad compares the two; docs/real-backend.md has the
// figures). What is left above a millisecond or so coincides with the
// host taking the VM's CPU (steal), which nothing here can help.
//
// # Keeping the CPUs awake
//
// An idle vCPU halts, and the host takes tens of µs to milliseconds to
// run it again when a timer or a frame wakes the shaper on it: on the VM
// this was written on, a SCHED_FIFO thread's 300 µs sleep overslept by
// 26 µs at the median and 2 ms at the 99th percentile. So, while the
// child runs, a spinner process (startSpinners) spins a thread per CPU,
// pinned to it under SCHED_IDLE, which keeps every CPU out of the idle
// loop (any other thread preempts such a spinner at once): the same
// sleep then oversleeps by 6 µs and 19 µs. This matters most for sparse
// traffic, chrony's or ptp4l's: on the real2-onoff links chrony basic
// read 27 to 90 µs at the median without the spinners and 1.3 to 2.4 µs
// with them. Info.WakeLate and Info.ReadLag report how late the thread
// woke and read. The spinner process exits when the child closes its
// stdin, or dies.
package shaper
