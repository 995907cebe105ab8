#!/usr/bin/env python3
"""Read a chronosync time page: global time for local processes.

A running `chronosync node` publishes its clock model in a 4 KiB page,
/dev/shm/chronosync-<cluster>-node<N>; this module reads it with the same
seqlock and checksum protocol as timepage.Reader (Go) and
include/chronosync_time.h (C). Standard library only.

    from chronosync_time import TimePage, Stale
    with TimePage("/dev/shm/chronosync-prod-node3") as page:
        g, sigma = page.now_global()          # raises Stale past the deadline

Stale and Failed carry the extrapolated values (.global_ns, .sigma_ns):
the condition is never hidden, the numbers are there for who wants them.

As a command: chronosync_time.py PAGE [LOCAL_NS ...] prints one JSON line
per reading (or for now), with "status": "ok", "stale", "failed",
"no_model" or "torn".

Python cannot issue the memory fences the seqlock needs on weakly ordered
CPUs; the checksum catches what the fences would have prevented, and such
reads are counted (checksum_failures) and retried.
"""

import json
import math
import mmap
import os
import struct
import sys
import time

PAGE_SIZE = 4096
MAGIC = 0x50545343  # "CSTP"
VERSION = 1
MODEL_WORDS = 16
MAX_RETRIES = 1000
STATUS_NONE, STATUS_OK, STATUS_DEGRADED, STATUS_FAILED = 0, 1, 2, 3
_M64 = (1 << 64) - 1
_HEADER = struct.Struct("<IIII")
_SEQ = struct.Struct("<Q")
_BODY = struct.Struct("<Q" + "Q" * MODEL_WORDS)  # checksum, then the model words
_MODEL = struct.Struct("<QQqqdddddddqqqiiiHH")


class TimePageError(Exception):
    """Base of the errors a reading raises."""


class NoModel(TimePageError):
    """The page was never published to."""


class Torn(TimePageError):
    """No consistent copy of the model after MAX_RETRIES tries."""


class _Judged(TimePageError):
    def __init__(self, msg, global_ns, sigma_ns):
        super().__init__(msg)
        self.global_ns = global_ns
        self.sigma_ns = sigma_ns


class Stale(_Judged):
    """The reading is past the model's deadline (no round within it)."""


class Failed(_Judged):
    """The node published status failed."""


def checksum(words):
    """The model region's checksum (timepage.Checksum in Go)."""
    prime, seed = 0x100000001B3, 0xCBF29CE484222325
    lanes = [seed, seed ^ 1, seed ^ 2, seed ^ 3]
    for i, w in enumerate(words):
        j = i & 3
        lanes[j] = ((lanes[j] ^ w) * prime) & _M64

    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & _M64

    h = lanes[0] ^ rotl(lanes[1], 17) ^ rotl(lanes[2], 31) ^ rotl(lanes[3], 47)
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _M64
    h ^= h >> 33
    return h


def _round_half_away(x):
    """x rounded to the nearest integer, halves away from zero (Go's math.Round, C's llround)."""
    t = math.trunc(x)
    f = x - t  # exact
    if f >= 0.5:
        return int(t) + 1
    if f <= -0.5:
        return int(t) - 1
    return int(t)


class Model:
    """A consistent copy of the page's model."""

    FIELDS = ("round_id", "window_id", "window_start_ns", "window_end_ns", "offset_ns", "drift_ppm",
              "sigma_ns", "drift_sigma_ppm", "step_sum_ns", "step_var_ns2", "step_abs_sum_ns",
              "steps_end_ns", "valid_until_ns", "published_ns", "node_id", "reference_node",
              "clock_id", "status", "step_count")

    def __init__(self, raw):
        for name, value in zip(self.FIELDS, _MODEL.unpack(raw)):
            setattr(self, name, value)

    def to_global(self, local_ns):
        """(global_ns, sigma_ns) of local_ns, without judging deadline or status."""
        d = float(local_ns - self.window_start_ns)
        drift = self.drift_ppm * 1e-6
        corr = self.offset_ns + drift * d + (1 - drift) * self.step_sum_ns
        x = self.drift_sigma_ppm * 1e-6 * (d - float(self.window_end_ns - self.window_start_ns) / 2)
        v = self.sigma_ns * self.sigma_ns + x * x + self.step_var_ns2
        if local_ns < self.steps_end_ns:
            # The reading may lie before some of the window's steps: cover them all.
            a = self.step_abs_sum_ns * abs(1 - drift)
            v += a * a
        return local_ns - _round_half_away(corr), math.sqrt(v)

    def as_dict(self):
        return {name: getattr(self, name) for name in self.FIELDS}


class TimePage:
    """A chronosync time page mapped read-only."""

    def __init__(self, path):
        self.path = path
        self.reads = 0
        self.seq_retries = 0
        self.checksum_failures = 0
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            size = os.fstat(fd).st_size
            if size < PAGE_SIZE:
                raise TimePageError(f"{path}: {size} bytes, expected at least {PAGE_SIZE}")
            self._mm = mmap.mmap(fd, PAGE_SIZE, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)
        magic, version, psize, self.pid = _HEADER.unpack_from(self._mm, 0)
        if magic != MAGIC or version != VERSION or psize != PAGE_SIZE:
            self._mm.close()
            raise TimePageError(f"{path}: magic {magic:#010x} version {version} size {psize}, "
                                f"expected {MAGIC:#010x} version {VERSION} size {PAGE_SIZE}")

    def close(self):
        self._mm.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def load(self):
        """A consistent copy of the model; raises NoModel or Torn."""
        mm = self._mm
        for _ in range(MAX_RETRIES):
            (s1,) = _SEQ.unpack_from(mm, 16)
            if s1 & 1:
                self.seq_retries += 1
                continue
            if s1 == 0:
                raise NoModel(f"{self.path}: no model published yet")
            body = mm[24:32 + 8 * MODEL_WORDS]
            (s2,) = _SEQ.unpack_from(mm, 16)
            if s1 != s2:
                self.seq_retries += 1
                continue
            vals = _BODY.unpack(body)
            if checksum(vals[1:]) != vals[0]:
                self.checksum_failures += 1
                continue
            self.reads += 1
            m = Model(body[8:])
            if m.status == STATUS_NONE:
                raise NoModel(f"{self.path}: no model published yet")
            return m
        raise Torn(f"{self.path}: torn reads on every one of {MAX_RETRIES} tries")

    def to_global(self, local_ns):
        """(global_ns, sigma_ns) of local_ns, a CLOCK_REALTIME reading.

        Raises Stale past the deadline, Failed where the node says so (both
        carrying the values), NoModel, Torn."""
        m = self.load()
        return self._judge(m, local_ns)

    def now_global(self):
        """to_global of the model's clock read now."""
        m = self.load()
        return self._judge(m, time.clock_gettime_ns(m.clock_id))

    @staticmethod
    def _judge(m, local_ns):
        g, s = m.to_global(local_ns)
        if m.status == STATUS_FAILED:
            raise Failed("node reports its model failed", g, s)
        if local_ns > m.valid_until_ns:
            raise Stale(f"model is stale: reading {local_ns} past its deadline {m.valid_until_ns}", g, s)
        return g, s


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        page = TimePage(argv[1])
    except (OSError, TimePageError) as e:
        print(f"chronosync_time: {e}", file=sys.stderr)
        return 1
    with page:
        readings = [int(a) for a in argv[2:]] or [None]
        for local in readings:
            out = {"local_ns": local}
            try:
                if local is None:
                    m = page.load()
                    out["local_ns"] = local = time.clock_gettime_ns(m.clock_id)
                g, s = page.to_global(local)
                out.update(status="ok", global_ns=g, sigma_ns=s)
            except Stale as e:
                out.update(status="stale", global_ns=e.global_ns, sigma_ns=e.sigma_ns)
            except Failed as e:
                out.update(status="failed", global_ns=e.global_ns, sigma_ns=e.sigma_ns)
            except NoModel:
                out.update(status="no_model")
            except Torn:
                out.update(status="torn")
            print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
