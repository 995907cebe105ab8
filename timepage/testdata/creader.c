/* creader: the C side of timepage's tests, built against
 * include/chronosync_time.h.
 *
 *   creader convert PAGE LOCAL_NS...  one line per reading: rc global_ns sigma_ns
 *   creader stress PAGE SECONDS       read in a tight loop; every model must be
 *                                     one of the stress writer's (fields from its round)
 *   creader bench PAGE N              ns per chronosync_to_global and chronosync_now_global
 */
#include "chronosync_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* consistent mirrors stressModel in timepage_test.go. */
static int consistent(const chronosync_model *m)
{
    uint64_t k = m->round_id;
    return m->window_id == 3 * k && m->window_start_ns == (int64_t)k * 1000 &&
           m->window_end_ns == (int64_t)k * 1000 + 500 && m->offset_ns == (double)k * 0.5 &&
           m->drift_ppm == (double)k * 1e-3 && m->sigma_ns == (double)k &&
           m->drift_sigma_ppm == (double)k * 1e-6 && m->step_sum_ns == (double)k * 2 &&
           m->step_var_ns2 == (double)k * 4 && m->step_abs_sum_ns == (double)k * 2 &&
           m->steps_end_ns == (int64_t)k * 1000 && m->valid_until_ns == (int64_t)k * 1000 + 1000000000000000LL &&
           m->published_ns == (int64_t)k * 7 && m->node_id == (int32_t)(k % 1000) &&
           m->reference_node == (int32_t)(k % 7) && m->clock_id == 0 && m->status == CHRONOSYNC_STATUS_OK &&
           m->step_count == (uint16_t)(k % 100);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: creader convert|stress|bench PAGE ...\n");
        return 2;
    }
    chronosync_handle h;
    if (chronosync_open(argv[2], &h) != CHRONOSYNC_OK) {
        perror(argv[2]);
        return 1;
    }
    if (strcmp(argv[1], "convert") == 0) {
        for (int i = 3; i < argc; i++) {
            int64_t local = strtoll(argv[i], NULL, 10), g = 0;
            double s = 0;
            int rc = chronosync_to_global(&h, local, &g, &s);
            printf("%d %" PRId64 " %.17g\n", rc, g, s);
        }
    } else if (strcmp(argv[1], "stress") == 0 && argc == 4) {
        int64_t end = mono_ns() + (int64_t)(atof(argv[3]) * 1e9);
        uint64_t mixed = 0, torn_rc = 0, other = 0, rounds_seen = 0, last = 0;
        while (mono_ns() < end) {
            for (int i = 0; i < 1000; i++) {
                chronosync_model m;
                int rc = chronosync_load(&h, &m);
                if (rc == CHRONOSYNC_TORN) {
                    torn_rc++;
                    continue;
                }
                if (rc != CHRONOSYNC_OK) {
                    other++;
                    continue;
                }
                if (!consistent(&m))
                    mixed++;
                if (m.round_id != last) {
                    rounds_seen++;
                    last = m.round_id;
                }
            }
        }
        printf("{\"reads\":%" PRIu64 ",\"seq_retries\":%" PRIu64 ",\"checksum_failures\":%" PRIu64
               ",\"mixed\":%" PRIu64 ",\"torn_rc\":%" PRIu64 ",\"other_rc\":%" PRIu64 ",\"rounds_seen\":%" PRIu64 "}\n",
               h.reads, h.seq_retries, h.checksum_failures, mixed, torn_rc, other, rounds_seen);
    } else if (strcmp(argv[1], "bench") == 0 && argc == 4) {
        long n = atol(argv[3]);
        int64_t local = 1795000020000000000LL, g = 0, sink = 0;
        double s;
        int bad = 0;
        int64_t t0 = mono_ns();
        for (long i = 0; i < n; i++) {
            bad |= chronosync_to_global(&h, local + i, &g, &s);
            sink += g;
        }
        int64_t t1 = mono_ns();
        for (long i = 0; i < n; i++) {
            chronosync_now_global(&h, &g, &s);
            sink += g;
        }
        int64_t t2 = mono_ns();
        printf("{\"to_global_ns\":%.3f,\"now_global_ns\":%.3f,\"rc\":%d,\"sink\":%" PRId64 "}\n",
               (double)(t1 - t0) / (double)n, (double)(t2 - t1) / (double)n, bad, sink & 1);
    } else {
        fprintf(stderr, "creader: unknown mode %s\n", argv[1]);
        return 2;
    }
    chronosync_close(&h);
    return 0;
}
