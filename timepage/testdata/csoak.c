/* csoak: a tracer reading a running node's time page for as long as the
 * node runs, built against include/chronosync_time.h; the C side of
 * cmd/chronosync's TestNodeServiceSoak (make soak).
 *
 *   csoak PAGE MAX_SECONDS
 *
 * In a tight loop it reads CLOCK_REALTIME and converts the reading to
 * global time through the page, as a tracer does for every timestamp,
 * until SIGTERM or SIGINT (or MAX_SECONDS, a safety net). Every second,
 * and once more at the end, it prints one JSON line of cumulative counts:
 *
 *   t_ns              CLOCK_REALTIME when the line was printed
 *   reads             conversions tried
 *   ok, stale, failed, no_model, torn, err
 *                     their return codes (torn: CHRONOSYNC_TORN, no
 *                     consistent copy after CHRONOSYNC_MAX_RETRIES tries)
 *   consistent        consistent copies the seqlock gave (h.reads)
 *   seq_retries       tries the seqlock refused (harmless)
 *   checksum_failures torn copies the seqlock let through, caught by the
 *                     checksum (h.checksum_failures): must be 0
 *   round_backwards   copies whose round id is below one seen before: a
 *                     mixed copy nothing else caught; must be 0
 *   rounds_seen       distinct round ids seen, in order
 *   last_round        the last round id seen
 *   last_ok_ns        the latest reading that converted ok (its
 *                     CLOCK_REALTIME, taken before the page was read)
 *   max_abs_dev_ns    the largest |global - reading| of the ok conversions
 *   max_sigma_ns      the largest sigma of the ok conversions
 *   final             1 on the last line
 *
 * Exit status 0, 1 when the page cannot be opened, 2 for bad usage.
 */
#include "chronosync_time.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
    uint64_t reads, ok, stale, failed, no_model, torn, err;
    uint64_t round_backwards, rounds_seen, last_round;
    int64_t last_ok_ns, max_abs_dev_ns;
    double max_sigma_ns;
} counts;

static void print_line(const chronosync_handle *h, const counts *c, int final)
{
    printf("{\"t_ns\":%" PRId64 ",\"reads\":%" PRIu64 ",\"ok\":%" PRIu64 ",\"stale\":%" PRIu64
           ",\"failed\":%" PRIu64 ",\"no_model\":%" PRIu64 ",\"torn\":%" PRIu64 ",\"err\":%" PRIu64
           ",\"consistent\":%" PRIu64 ",\"seq_retries\":%" PRIu64 ",\"checksum_failures\":%" PRIu64
           ",\"round_backwards\":%" PRIu64 ",\"rounds_seen\":%" PRIu64 ",\"last_round\":%" PRIu64
           ",\"last_ok_ns\":%" PRId64 ",\"max_abs_dev_ns\":%" PRId64 ",\"max_sigma_ns\":%.3f,\"final\":%d}\n",
           clock_ns(CLOCK_REALTIME), c->reads, c->ok, c->stale, c->failed, c->no_model, c->torn, c->err,
           h->reads, h->seq_retries, h->checksum_failures, c->round_backwards, c->rounds_seen, c->last_round,
           c->last_ok_ns, c->max_abs_dev_ns, c->max_sigma_ns, final);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: csoak PAGE MAX_SECONDS\n");
        return 2;
    }
    double max_seconds = atof(argv[2]);
    if (!(max_seconds > 0)) {
        fprintf(stderr, "csoak: MAX_SECONDS %s: want a number above 0\n", argv[2]);
        return 2;
    }
    chronosync_handle h;
    if (chronosync_open(argv[1], &h) != CHRONOSYNC_OK) {
        perror(argv[1]);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    counts c;
    memset(&c, 0, sizeof c);
    int64_t start = clock_ns(CLOCK_MONOTONIC);
    int64_t end = start + (int64_t)(max_seconds * 1e9), next_line = start + 1000000000;
    while (!stop_requested) {
        for (int i = 0; i < 1000; i++) {
            uint64_t w[CHRONOSYNC_MODEL_WORDS];
            /* The reading first, then the page: an ok answer means the page
             * was valid for a reading taken no later than it was read. */
            int64_t local = clock_ns(CLOCK_REALTIME), g = 0;
            double sigma = 0;
            c.reads++;
            int rc = chronosync_load_words(&h, w);
            if (rc == CHRONOSYNC_OK) {
                if (w[0] < c.last_round)
                    c.round_backwards++;
                else if (w[0] > c.last_round) {
                    c.rounds_seen++;
                    c.last_round = w[0];
                }
                rc = chronosync_words_global(w, local, &g, &sigma);
            }
            switch (rc) {
            case CHRONOSYNC_OK: {
                int64_t dev = g > local ? g - local : local - g;
                c.ok++;
                c.last_ok_ns = local;
                if (dev > c.max_abs_dev_ns)
                    c.max_abs_dev_ns = dev;
                if (sigma > c.max_sigma_ns)
                    c.max_sigma_ns = sigma;
                break;
            }
            case CHRONOSYNC_STALE:
                c.stale++;
                break;
            case CHRONOSYNC_FAILED:
                c.failed++;
                break;
            case CHRONOSYNC_NO_MODEL:
                c.no_model++;
                break;
            case CHRONOSYNC_TORN:
                c.torn++;
                break;
            default:
                c.err++;
            }
        }
        int64_t now = clock_ns(CLOCK_MONOTONIC);
        if (now >= next_line) {
            print_line(&h, &c, 0);
            next_line += 1000000000;
        }
        if (now >= end)
            break;
    }
    print_line(&h, &c, 1);
    chronosync_close(&h);
    return 0;
}
