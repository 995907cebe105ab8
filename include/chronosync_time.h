/*
 * chronosync_time.h - global time for local processes, without locks.
 *
 * A running `chronosync node` publishes its clock model after every round in
 * a 4 KiB shared-memory page, /dev/shm/chronosync-<cluster>-node<N> (mode
 * 0640: readable by the node owner's group). This header-only C11 API reads
 * it: map the page once with chronosync_open, then convert clock readings
 * with chronosync_to_global or read the clock and convert with
 * chronosync_now_global. A conversion takes a few tens of ns, takes no lock
 * and makes no system call (chronosync_now_global: one clock_gettime, a vDSO
 * call).
 *
 *     chronosync_handle h;
 *     if (chronosync_open("/dev/shm/chronosync-prod-node3", &h) == CHRONOSYNC_OK) {
 *         int64_t g; double sigma;
 *         int rc = chronosync_now_global(&h, &g, &sigma);
 *         if (rc == CHRONOSYNC_OK) ...              // g: global ns, sigma: 1σ in ns
 *         else if (rc == CHRONOSYNC_STALE) ...      // g, sigma filled: the last model, past its deadline
 *         chronosync_close(&h);
 *     }
 *
 * Return codes: CHRONOSYNC_OK; CHRONOSYNC_STALE (no round within the
 * model's deadline: the node stopped or lost its cluster; the values are
 * the last model's extrapolation and filled in); CHRONOSYNC_FAILED (the node
 * says its model failed; values filled in); CHRONOSYNC_NO_MODEL (never
 * published); CHRONOSYNC_TORN (no consistent copy after
 * CHRONOSYNC_MAX_RETRIES tries); CHRONOSYNC_ERR (open/mmap failed, not a
 * version-1 page, bad arguments; errno says more after chronosync_open).
 *
 * Layout (little-endian; docs/node-service.md, section 2, has the table): magic
 * "CSTP" (u32 @0), version 1 (u32 @4), size 4096 (u32 @8), publisher pid
 * (u32 @12), seqlock sequence (u64 @16: odd while written, 0 never
 * published), checksum (u64 @24) of the model region, 16 words @32..160.
 *
 * Reading protocol (seqlock): load the sequence (acquire); odd: retry; load
 * the checksum and model words (relaxed atomic loads); acquire fence; load
 * the sequence again; changed: retry. Then verify the checksum: a mismatch
 * is a torn read the seqlock let through, counted in h->checksum_failures
 * (must stay 0) and retried.
 *
 * Link with -lm where the compiler does not inline sqrt. The handle is not
 * safe for concurrent use by several threads (its counters are plain);
 * open one per thread, or share a read-only copy without the counters.
 */
#ifndef CHRONOSYNC_TIME_H
#define CHRONOSYNC_TIME_H

/* clock_gettime, mmap and O_CLOEXEC are POSIX: under -std=c11 ask for them
 * (this only works where the header comes before any system header; else
 * compile with -D_POSIX_C_SOURCE=200809L or -std=gnu11). */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE) && !defined(_XOPEN_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHRONOSYNC_OK 0
#define CHRONOSYNC_STALE 1
#define CHRONOSYNC_NO_MODEL 2
#define CHRONOSYNC_TORN 3
#define CHRONOSYNC_FAILED 4
#define CHRONOSYNC_ERR (-1)

#define CHRONOSYNC_PAGE_SIZE 4096
#define CHRONOSYNC_MAGIC 0x50545343u /* "CSTP" */
#define CHRONOSYNC_VERSION 1u
#define CHRONOSYNC_MODEL_WORDS 16
#define CHRONOSYNC_MAX_RETRIES 1000

/* CHRONOSYNC_UNROLL unrolls the fixed 16-word loops fully where the
 * compiler takes the hint (GCC 8+, clang). */
#if defined(__clang__)
#define CHRONOSYNC_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define CHRONOSYNC_UNROLL _Pragma("GCC unroll 16")
#else
#define CHRONOSYNC_UNROLL
#endif

#define CHRONOSYNC_STATUS_NONE 0
#define CHRONOSYNC_STATUS_OK 1
#define CHRONOSYNC_STATUS_DEGRADED 2
#define CHRONOSYNC_STATUS_FAILED 3

/* The page as mapped: offsets are the layout's. */
typedef struct {
    uint32_t magic;    /* @0 */
    uint32_t version;  /* @4 */
    uint32_t size;     /* @8 */
    uint32_t pid;      /* @12 */
    uint64_t seq;      /* @16 */
    uint64_t checksum; /* @24 */
    uint64_t model[CHRONOSYNC_MODEL_WORDS]; /* @32 */
} chronosync_page;

#ifdef __cplusplus
static_assert(sizeof(chronosync_page) == 160, "chronosync_page must match the version-1 layout");
#else
_Static_assert(sizeof(chronosync_page) == 160, "chronosync_page must match the version-1 layout");
#endif

/* A consistent copy of the model, decoded. */
typedef struct {
    uint64_t round_id, window_id;
    int64_t window_start_ns, window_end_ns;
    double offset_ns, drift_ppm, sigma_ns, drift_sigma_ppm;
    double step_sum_ns, step_var_ns2, step_abs_sum_ns;
    int64_t steps_end_ns, valid_until_ns, published_ns;
    int32_t node_id, reference_node, clock_id;
    uint16_t status, step_count;
} chronosync_model;

/* An open page and its reader's counts (one thread's). */
typedef struct {
    const volatile chronosync_page *page;
    uint64_t reads;             /* consistent copies taken */
    uint64_t seq_retries;       /* tries the seqlock refused (harmless) */
    uint64_t checksum_failures; /* torn reads the seqlock let through: must be 0 */
} chronosync_handle;

/* chronosync_open maps the page at path read-only into *h and checks its
 * header (magic, version 1, size). CHRONOSYNC_ERR with errno: the open or
 * mmap's, EINVAL for a short file, EPROTO for a page of another layout. */
static inline int chronosync_open(const char *path, chronosync_handle *h)
{
    if (path == NULL || h == NULL) {
        errno = EINVAL;
        return CHRONOSYNC_ERR;
    }
    memset(h, 0, sizeof *h);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CHRONOSYNC_ERR;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < CHRONOSYNC_PAGE_SIZE) {
        close(fd);
        errno = EINVAL;
        return CHRONOSYNC_ERR;
    }
    void *p = mmap(NULL, CHRONOSYNC_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    int saved = errno;
    close(fd);
    if (p == MAP_FAILED) {
        errno = saved;
        return CHRONOSYNC_ERR;
    }
    const chronosync_page *pg = (const chronosync_page *)p;
    if (__atomic_load_n(&pg->magic, __ATOMIC_ACQUIRE) != CHRONOSYNC_MAGIC ||
        __atomic_load_n(&pg->version, __ATOMIC_RELAXED) != CHRONOSYNC_VERSION ||
        __atomic_load_n(&pg->size, __ATOMIC_RELAXED) != CHRONOSYNC_PAGE_SIZE) {
        munmap(p, CHRONOSYNC_PAGE_SIZE);
        errno = EPROTO;
        return CHRONOSYNC_ERR;
    }
    h->page = (const volatile chronosync_page *)p;
    return CHRONOSYNC_OK;
}

/* chronosync_close unmaps the page; h may be opened again. */
static inline void chronosync_close(chronosync_handle *h)
{
    if (h != NULL && h->page != NULL) {
        munmap((void *)(uintptr_t)h->page, CHRONOSYNC_PAGE_SIZE);
        h->page = NULL;
    }
}

static inline uint64_t chronosync_rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* The checksum of the model words (timepage.Checksum in Go). */
static inline uint64_t chronosync_checksum(const uint64_t w[CHRONOSYNC_MODEL_WORDS])
{
    const uint64_t prime = 0x100000001b3ull, seed = 0xcbf29ce484222325ull;
    uint64_t l0 = seed, l1 = seed ^ 1, l2 = seed ^ 2, l3 = seed ^ 3;
    CHRONOSYNC_UNROLL
    for (int i = 0; i < CHRONOSYNC_MODEL_WORDS; i += 4) {
        l0 = (l0 ^ w[i]) * prime;
        l1 = (l1 ^ w[i + 1]) * prime;
        l2 = (l2 ^ w[i + 2]) * prime;
        l3 = (l3 ^ w[i + 3]) * prime;
    }
    uint64_t h = l0 ^ chronosync_rotl64(l1, 17) ^ chronosync_rotl64(l2, 31) ^ chronosync_rotl64(l3, 47);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static inline double chronosync_f64(uint64_t w)
{
    double d;
    memcpy(&d, &w, sizeof d);
    return d;
}

/* chronosync_cpu_relax eases a spin while the writer holds the sequence odd. */
static inline void chronosync_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* chronosync_load_words copies the model region consistently into w: the
 * seqlock's read side, then the checksum. */
static inline int chronosync_load_words(chronosync_handle *h, uint64_t w[CHRONOSYNC_MODEL_WORDS])
{
    if (h == NULL || h->page == NULL)
        return CHRONOSYNC_ERR;
    const chronosync_page *pg = (const chronosync_page *)(uintptr_t)h->page;
    for (int tries = 0; tries < CHRONOSYNC_MAX_RETRIES; tries++) {
        uint64_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1) {
            h->seq_retries++;
            chronosync_cpu_relax();
            continue;
        }
        if (s1 == 0)
            return CHRONOSYNC_NO_MODEL;
        uint64_t sum = __atomic_load_n(&pg->checksum, __ATOMIC_RELAXED);
        CHRONOSYNC_UNROLL
        for (int i = 0; i < CHRONOSYNC_MODEL_WORDS; i++)
            w[i] = __atomic_load_n(&pg->model[i], __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) != s1) {
            h->seq_retries++;
            continue;
        }
        if (chronosync_checksum(w) != sum) {
            h->checksum_failures++;
            continue;
        }
        h->reads++;
        return (uint16_t)(w[15] >> 32) == CHRONOSYNC_STATUS_NONE ? CHRONOSYNC_NO_MODEL : CHRONOSYNC_OK;
    }
    return CHRONOSYNC_TORN;
}

/* chronosync_load takes a consistent copy of the model, decoded. */
static inline int chronosync_load(chronosync_handle *h, chronosync_model *m)
{
    uint64_t w[CHRONOSYNC_MODEL_WORDS];
    if (m == NULL)
        return CHRONOSYNC_ERR;
    int rc = chronosync_load_words(h, w);
    if (rc != CHRONOSYNC_OK)
        return rc;
    {
        m->round_id = w[0];
        m->window_id = w[1];
        m->window_start_ns = (int64_t)w[2];
        m->window_end_ns = (int64_t)w[3];
        m->offset_ns = chronosync_f64(w[4]);
        m->drift_ppm = chronosync_f64(w[5]);
        m->sigma_ns = chronosync_f64(w[6]);
        m->drift_sigma_ppm = chronosync_f64(w[7]);
        m->step_sum_ns = chronosync_f64(w[8]);
        m->step_var_ns2 = chronosync_f64(w[9]);
        m->step_abs_sum_ns = chronosync_f64(w[10]);
        m->steps_end_ns = (int64_t)w[11];
        m->valid_until_ns = (int64_t)w[12];
        m->published_ns = (int64_t)w[13];
        m->node_id = (int32_t)(uint32_t)w[14];
        m->reference_node = (int32_t)(uint32_t)(w[14] >> 32);
        m->clock_id = (int32_t)(uint32_t)w[15];
        m->status = (uint16_t)(w[15] >> 32);
        m->step_count = (uint16_t)(w[15] >> 48);
    }
    return CHRONOSYNC_OK;
}

/* chronosync_round rounds x to the nearest integer, halves away from zero
 * (llround, Go's math.Round), exactly, without a libm call; |x| < 2^62. */
static inline int64_t chronosync_round(double x)
{
    int64_t t = (int64_t)x; /* toward zero */
    double f = x - (double)t; /* exact */
    return t + (f >= 0.5) - (f <= -0.5);
}

/* chronosync_words_global applies a consistent copy of the model region to
 * local_ns and judges it (timepage's judge and wordsToGlobal in Go). */
static inline int chronosync_words_global(const uint64_t w[CHRONOSYNC_MODEL_WORDS], int64_t local_ns,
                                          int64_t *global_ns, double *sigma_ns)
{
    int64_t start = (int64_t)w[2];
    double drift = chronosync_f64(w[5]) * 1e-6;
    double d = (double)(local_ns - start);
    double corr = chronosync_f64(w[4]) + drift * d + (1 - drift) * chronosync_f64(w[8]);
    double x = chronosync_f64(w[7]) * 1e-6 * (d - (double)((int64_t)w[3] - start) / 2);
    double sigma = chronosync_f64(w[6]);
    double v = sigma * sigma + x * x + chronosync_f64(w[9]);
    if (local_ns < (int64_t)w[11]) {
        /* The reading may lie before some of the window's steps: cover them all. */
        double a = chronosync_f64(w[10]) * fabs(1 - drift);
        v += a * a;
    }
    if (global_ns != NULL)
        *global_ns = local_ns - chronosync_round(corr);
    if (sigma_ns != NULL)
        *sigma_ns = sqrt(v);
    if ((uint16_t)(w[15] >> 32) == CHRONOSYNC_STATUS_FAILED)
        return CHRONOSYNC_FAILED;
    if (local_ns > (int64_t)w[12])
        return CHRONOSYNC_STALE;
    return CHRONOSYNC_OK;
}

/* chronosync_to_global maps local_ns, a CLOCK_REALTIME reading, to global
 * time (ns) and its 1σ (ns). Either output pointer may be NULL. */
static inline int chronosync_to_global(chronosync_handle *h, int64_t local_ns,
                                       int64_t *global_ns, double *sigma_ns)
{
    uint64_t w[CHRONOSYNC_MODEL_WORDS];
    int rc = chronosync_load_words(h, w);
    if (rc != CHRONOSYNC_OK)
        return rc;
    return chronosync_words_global(w, local_ns, global_ns, sigma_ns);
}

/* chronosync_now_global reads the model's clock (CLOCK_REALTIME) now and
 * maps it to global time. */
static inline int chronosync_now_global(chronosync_handle *h, int64_t *global_ns, double *sigma_ns)
{
    uint64_t w[CHRONOSYNC_MODEL_WORDS];
    int rc = chronosync_load_words(h, w);
    if (rc != CHRONOSYNC_OK)
        return rc;
    struct timespec ts;
    if (clock_gettime((clockid_t)(int32_t)(uint32_t)w[15], &ts) != 0)
        return CHRONOSYNC_ERR;
    return chronosync_words_global(w, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, global_ns, sigma_ns);
}

#ifdef __cplusplus
}
#endif

#endif /* CHRONOSYNC_TIME_H */
