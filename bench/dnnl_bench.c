/* dnnl_bench.c: times oneDNN (C API, 2.x) on one convgrad problem, for comparison.
 *
 *   dnnl_bench PROBLEM_STRING [--threads T] [--reps R] [--min-ms M] [--layout any|plain]
 *              [--rounds N] [--direct-only] [--with-ref] [--json] [--verbose]
 *
 * PROBLEM_STRING is convgrad's canonical problem string (cg_problem_format). For each op of
 * the problem (fwd, bwd_data, bwd_weight; bwd_weight computes the bias gradient too when the
 * problem also asks for bwd_bias) the harness walks every implementation oneDNN offers, for
 * the direct, auto and winograd algorithms, times each one and reports the fastest: "oneDNN at
 * its best for this shape". A problem whose only op is bwd_bias is reported as n/a.
 *
 * Method, chosen to match benchdnn's defaults:
 *  - Memory formats are dnnl_format_tag_any (--layout any, the default): every implementation
 *    picks its preferred, usually blocked, layout (nChw16c, OIhw16i16o, ...) and only the
 *    primitive's execution is timed; the reorders from and to convgrad's plain layout are not.
 *    --layout plain pins every tensor to convgrad's own layout instead (NCHW/OIHW with the
 *    groups split out, or NHWC/OHWI), which is the like-for-like comparison but shuts out most
 *    of oneDNN's fast kernels.
 *  - Inputs and outputs are filled with uniform random numbers in [-1, 1) from a fixed seed
 *    per tensor, written through a reorder so blocked layouts get their zero padding.
 *  - Each implementation is created (JIT included, not timed), run once as warm-up, then run
 *    until it has at least R runs and M milliseconds in total; the median is its time.
 *    Implementations that are clearly slower than the best one so far (a warm-up over
 *    WARMUP_PRUNE or a run over PRUNE_FACTOR times the best median) stop there. Reference
 *    kernels ("ref:any") are skipped unless --with-ref or nothing else applies. An (impl,
 *    formats) pair already timed under another algorithm is skipped. The whole pass is made
 *    --rounds times (default 3) and the lowest median wins, which keeps a slow spell of a
 *    shared machine out of the result.
 *  - Threads: Debian's libdnnl uses GNU OpenMP; this program links the same runtime
 *    (-fopenmp=libgomp) and calls omp_set_num_threads(T) before oneDNN starts.
 *
 * FLOPs are cg_problem_flops(): 2*N*K*(C/G)*prod(out)*prod(filter) for every op (the bias
 * gradient adds none). Exit status: 0 ok, 1 oneDNN or system failure, 2 bad arguments.
 */
#include "cg_problem.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PRUNE_FACTOR 3.0    /* a single run this many times the best median ends an impl */
#define WARMUP_PRUNE 10.0   /* a warm-up this many times the best median: not timed further */
#define IMPL_CAP_MS 10000.0 /* no implementation is timed for longer than this */
#define MAX_SEEN 64         /* distinct (impl, formats) pairs remembered per op */
#define KEY_MAX 192

typedef struct options {
    int threads;
    int reps;
    double min_ms;
    int rounds;
    int json;
    int verbose;
    int plain;       /* 1: convgrad's own layouts; 0: dnnl_format_tag_any */
    int with_ref;    /* also time oneDNN's reference implementations ("ref:...") */
    int direct_only; /* only dnnl_convolution_direct (no winograd through auto) */
} options;

/* What one op is timed as. */
typedef struct op_case {
    unsigned op;       /* CG_OP_FWD, CG_OP_BWD_DATA or CG_OP_BWD_WEIGHT */
    int bias;          /* bwd_weight also computes the bias gradient */
    const char *label; /* "bwd_data", "bwd_weight+bias", ... */
} op_case;

/* The fastest implementation found so far for one op. */
typedef struct best_impl {
    int found;
    char impl[KEY_MAX];
    char formats[KEY_MAX];
    const char *alg;
    double median_ms, min_ms, max_ms;
    int runs;
    int tried; /* implementations timed */
    char seen[MAX_SEEN][KEY_MAX];
    int seen_count;
} best_impl;

typedef struct context {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    const cg_problem *problem;
    const options *opts;
    dnnl_data_type_t dtype;
} context;

#define DNNL_TRY(call)                                                                             \
    do {                                                                                           \
        dnnl_status_t try_status_ = (call);                                                        \
        if (try_status_ != dnnl_success) {                                                         \
            fprintf(stderr, "dnnl_bench: %s failed: %s (line %d)\n", #call,                        \
                    dnnl_status2str(try_status_), __LINE__);                                       \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* splitmix64: a fixed seed per tensor keeps the data independent of the order impls run in. */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Appends to a fixed buffer, truncating silently (used for names and format strings only). */
static void append(char *buf, size_t cap, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len + 1 >= cap) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf + len, cap - len, fmt, args);
    va_end(args);
}

/* oneDNN's format-tag spelling of a memory descriptor: outer dims by decreasing stride, a
 * blocked dim in upper case, then the inner blocks ("aBcd16b" is nChw16c). */
static void describe_md(const dnnl_memory_desc_t *md, char *buf, size_t cap) {
    buf[0] = '\0';
    if (md->format_kind != dnnl_blocked) {
        append(buf, cap, "%s", dnnl_fmt_kind2str(md->format_kind));
        return;
    }
    const dnnl_blocking_desc_t *blk = &md->format_desc.blocking;
    int order[DNNL_MAX_NDIMS], blocked[DNNL_MAX_NDIMS] = {0};
    for (int i = 0; i < blk->inner_nblks; i++)
        blocked[blk->inner_idxs[i]] = 1;
    for (int d = 0; d < md->ndims; d++)
        order[d] = d;
    for (int i = 1; i < md->ndims; i++) /* insertion sort, stable for equal strides */
        for (int j = i; j > 0 && blk->strides[order[j]] > blk->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < md->ndims; i++)
        append(buf, cap, "%c", (blocked[order[i]] ? 'A' : 'a') + order[i]);
    for (int i = 0; i < blk->inner_nblks; i++)
        append(buf, cap, "%lld%c", (long long)blk->inner_blks[i], 'a' + (int)blk->inner_idxs[i]);
}

/* Logical dims of one tensor as oneDNN orders them: activations N, C, spatial; weights
 * [G,] O, I, spatial. Returns ndims. */
static int logical_dims(const cg_problem *p, cg_tensor t, dnnl_dims_t dims) {
    int r = p->rank, nd = 0;
    const int64_t *spatial = NULL;
    switch (t) {
    case CG_T_X: dims[nd++] = p->n, dims[nd++] = p->c, spatial = p->in; break;
    case CG_T_DY: dims[nd++] = p->n, dims[nd++] = p->k, spatial = p->out; break;
    case CG_T_W:
        if (p->groups > 1) dims[nd++] = p->groups;
        dims[nd++] = p->k / p->groups, dims[nd++] = p->c / p->groups, spatial = p->filter;
        break;
    case CG_T_DB: dims[0] = p->k; return 1;
    default: return 0;
    }
    for (int d = 0; d < r; d++)
        dims[nd++] = spatial[d];
    return nd;
}

/* Strides of convgrad's own layout (spec/problem-format.md) for the dims above. */
static void plain_strides(const cg_problem *p, const dnnl_dims_t dims, int nd,
                          dnnl_dims_t strides) {
    int r = p->rank;
    int lead = nd - r - 2; /* 1 for grouped weights: the group dim */
    int64_t sp = 1;        /* elements of one spatial plane */
    for (int d = 0; d < r; d++)
        sp *= dims[lead + 2 + d];
    int64_t run = 1;
    for (int d = r - 1; d >= 0; d--) {
        strides[lead + 2 + d] = run * (p->channels_last ? dims[lead + 1] : 1);
        run *= dims[lead + 2 + d];
    }
    if (p->channels_last) {
        strides[lead + 1] = 1;
    } else {
        strides[lead + 1] = sp;
    }
    strides[lead] = sp * dims[lead + 1];
    /* The group dim is the outer part of K (weights) in both families. */
    if (lead) strides[0] = strides[1] * dims[1];
}

static int init_md(const context *ctx, cg_tensor t, dnnl_memory_desc_t *md) {
    dnnl_dims_t dims, strides;
    int nd = logical_dims(ctx->problem, t, dims);
    if (t == CG_T_DB) {
        DNNL_TRY(dnnl_memory_desc_init_by_tag(md, 1, dims, ctx->dtype, dnnl_a));
    } else if (ctx->opts->plain) {
        plain_strides(ctx->problem, dims, nd, strides);
        DNNL_TRY(dnnl_memory_desc_init_by_strides(md, nd, dims, ctx->dtype, strides));
    } else {
        DNNL_TRY(dnnl_memory_desc_init_by_tag(md, nd, dims, ctx->dtype, dnnl_format_tag_any));
    }
    return 0;
fail:
    return -1;
}

/* A memory object of the primitive's layout, filled with random data through a reorder from
 * a plain f32 buffer (the reorder zero-fills block padding as oneDNN expects). */
static int make_memory(const context *ctx, const dnnl_memory_desc_t *md, uint64_t seed,
                       dnnl_memory_t *out) {
    int rc = -1;
    float *host = NULL;
    dnnl_memory_t user = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_desc_t user_md;
    static const dnnl_format_tag_t plain_tags[] = {dnnl_a,    dnnl_ab,    dnnl_abc,
                                                   dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    *out = NULL;
    if (md->ndims < 1 || md->ndims > 6) {
        fprintf(stderr, "dnnl_bench: unexpected tensor rank %d\n", md->ndims);
        return -1;
    }
    DNNL_TRY(dnnl_memory_create(out, md, ctx->engine, DNNL_MEMORY_ALLOCATE));
    size_t elems = 1;
    for (int d = 0; d < md->ndims; d++)
        elems *= (size_t)md->dims[d];
    host = malloc(elems * sizeof *host);
    if (!host) {
        fprintf(stderr, "dnnl_bench: out of memory (%zu floats)\n", elems);
        goto fail;
    }
    uint64_t state = seed;
    for (size_t i = 0; i < elems; i++)
        host[i] = (float)((double)(next_random(&state) >> 40) * 0x1p-23 - 1.0);
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&user_md, md->ndims, md->dims, dnnl_f32,
                                          plain_tags[md->ndims - 1]));
    DNNL_TRY(dnnl_memory_create(&user, &user_md, ctx->engine, host));
    DNNL_TRY(
        dnnl_reorder_primitive_desc_create(&rpd, &user_md, ctx->engine, md, ctx->engine, NULL));
    DNNL_TRY(dnnl_primitive_create(&reorder, rpd));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, *out}};
    DNNL_TRY(dnnl_primitive_execute(reorder, ctx->stream, 2, args));
    DNNL_TRY(dnnl_stream_wait(ctx->stream));
    rc = 0;
fail:
    if (reorder) dnnl_primitive_destroy(reorder);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (user) dnnl_memory_destroy(user);
    free(host);
    if (rc && *out) {
        dnnl_memory_destroy(*out);
        *out = NULL;
    }
    return rc;
}

/* Execution arguments of an op, in the order they are filled. */
static int op_args(const op_case *oc, int ids[4]) {
    switch (oc->op) {
    case CG_OP_FWD:
        ids[0] = DNNL_ARG_SRC, ids[1] = DNNL_ARG_WEIGHTS, ids[2] = DNNL_ARG_DST;
        return 3;
    case CG_OP_BWD_DATA:
        ids[0] = DNNL_ARG_DIFF_DST, ids[1] = DNNL_ARG_WEIGHTS, ids[2] = DNNL_ARG_DIFF_SRC;
        return 3;
    default:
        ids[0] = DNNL_ARG_SRC, ids[1] = DNNL_ARG_DIFF_DST, ids[2] = DNNL_ARG_DIFF_WEIGHTS;
        ids[3] = DNNL_ARG_DIFF_BIAS;
        return oc->bias ? 4 : 3;
    }
}

/* Times one implementation (a primitive descriptor from the iterator) and updates *best. */
static int bench_impl(const context *ctx, const op_case *oc, const char *alg,
                      const_dnnl_primitive_desc_t pd, best_impl *best) {
    int rc = -1, nargs, ids[4];
    dnnl_exec_arg_t args[4];
    dnnl_primitive_t prim = NULL;
    double *times = NULL;
    const char *impl = NULL;
    char key[KEY_MAX], formats[KEY_MAX] = "";

    nargs = op_args(oc, ids);
    for (int i = 0; i < nargs; i++)
        args[i].memory = NULL;
    DNNL_TRY(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&impl));
    for (int i = 0; i < nargs; i++) {
        const dnnl_memory_desc_t *md =
            dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, ids[i]);
        char text[48];
        if (!md) {
            fprintf(stderr, "dnnl_bench: %s: no memory descriptor for argument %d\n", impl, ids[i]);
            goto fail;
        }
        describe_md(md, text, sizeof text);
        append(formats, sizeof formats, "%s%s", i ? "," : "", text);
    }
    snprintf(key, sizeof key, "%s/%s", impl, formats);
    for (int i = 0; i < best->seen_count; i++)
        if (strcmp(best->seen[i], key) == 0) {
            if (ctx->opts->verbose)
                fprintf(stderr, "  %-8s %-28s %-40s  (already seen)\n", alg, impl, formats);
            return 0;
        }
    if (best->seen_count < MAX_SEEN) snprintf(best->seen[best->seen_count++], KEY_MAX, "%s", key);
    /* Reference kernels are plain loops, 100-1000x slower than the JIT ones: one run of them
     * costs seconds and they are never the fastest. They come last in oneDNN's list, so they
     * are timed only when nothing else implements the descriptor. */
    if (!ctx->opts->with_ref && best->found && strncmp(impl, "ref:", 4) == 0) {
        if (ctx->opts->verbose)
            fprintf(stderr, "  %-8s %-28s %-40s  (reference, skipped)\n", alg, impl, formats);
        return 0;
    }

    for (int i = 0; i < nargs; i++) {
        const dnnl_memory_desc_t *md =
            dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, ids[i]);
        args[i].arg = ids[i];
        if (make_memory(ctx, md, 0x5eed0000u + (uint64_t)ids[i], &args[i].memory)) goto fail;
    }
    DNNL_TRY(dnnl_primitive_create(&prim, pd));
    /* Warm-up: first-touch page faults, caches, OpenMP thread start. */
    double warm_start = now_ms();
    DNNL_TRY(dnnl_primitive_execute(prim, ctx->stream, nargs, args));
    DNNL_TRY(dnnl_stream_wait(ctx->stream));
    double warm_ms = now_ms() - warm_start;

    int cap = 64, runs = 0;
    double total = 0;
    times = malloc((size_t)cap * sizeof *times);
    if (!times) goto fail;
    /* A hopeless implementation's warm-up stands for its time. */
    int done = best->found && warm_ms > WARMUP_PRUNE * best->median_ms;
    if (done) times[runs++] = warm_ms;
    while (!done) {
        double start = now_ms();
        DNNL_TRY(dnnl_primitive_execute(prim, ctx->stream, nargs, args));
        DNNL_TRY(dnnl_stream_wait(ctx->stream));
        double elapsed = now_ms() - start;
        if (runs == cap) {
            double *grown = realloc(times, (size_t)cap * 2 * sizeof *times);
            if (!grown) goto fail;
            times = grown, cap *= 2;
        }
        times[runs++] = elapsed;
        total += elapsed;
        done = (runs >= ctx->opts->reps && total >= ctx->opts->min_ms) ||
               (best->found && elapsed > PRUNE_FACTOR * best->median_ms) || total >= IMPL_CAP_MS;
    }
    qsort(times, (size_t)runs, sizeof *times, compare_double);
    double median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    best->tried++;
    if (ctx->opts->verbose)
        fprintf(stderr, "  %-8s %-28s %-40s %10.3f ms  %4d runs\n", alg, impl, formats, median,
                runs);
    if (!best->found || median < best->median_ms) {
        best->found = 1;
        snprintf(best->impl, sizeof best->impl, "%s", impl);
        snprintf(best->formats, sizeof best->formats, "%s", formats);
        best->alg = alg;
        best->median_ms = median;
        best->min_ms = times[0];
        best->max_ms = times[runs - 1];
        best->runs = runs;
    }
    rc = 0;
fail:
    free(times);
    if (prim) dnnl_primitive_destroy(prim);
    for (int i = 0; i < nargs; i++)
        if (args[i].memory) dnnl_memory_destroy(args[i].memory);
    return rc;
}

/* Fills the convolution descriptor of an op for one algorithm. */
static dnnl_status_t init_desc(const context *ctx, const op_case *oc, dnnl_alg_kind_t alg,
                               const dnnl_memory_desc_t mds[4], dnnl_convolution_desc_t *desc) {
    const cg_problem *p = ctx->problem;
    dnnl_dims_t strides, dilates, pad_l, pad_r;
    for (int d = 0; d < p->rank; d++) {
        strides[d] = p->stride[d];
        dilates[d] = p->dilation[d] - 1; /* oneDNN counts the gaps: 0 is no dilation */
        pad_l[d] = p->pad_lo[d];
        pad_r[d] = p->pad_hi[d];
        /* Canonicalization sets stride 1 where out is 1 even if the padded input is longer
         * than the filter; oneDNN wants the arithmetic exact, and any stride past the span
         * gives the same single output. */
        int64_t span =
            p->in[d] + p->pad_lo[d] + p->pad_hi[d] - p->dilation[d] * (p->filter[d] - 1) - 1;
        if (p->out[d] == 1 && span > 0) strides[d] = span + 1;
    }
    const dnnl_memory_desc_t *x = &mds[CG_T_X], *w = &mds[CG_T_W], *dy = &mds[CG_T_DY];
    switch (oc->op) {
    case CG_OP_FWD:
        return dnnl_dilated_convolution_forward_desc_init(desc, dnnl_forward_training, alg, x, w,
                                                          NULL, dy, strides, dilates, pad_l, pad_r);
    case CG_OP_BWD_DATA:
        return dnnl_dilated_convolution_backward_data_desc_init(desc, alg, x, w, dy, strides,
                                                                dilates, pad_l, pad_r);
    default:
        return dnnl_dilated_convolution_backward_weights_desc_init(
            desc, alg, x, w, oc->bias ? &mds[CG_T_DB] : NULL, dy, strides, dilates, pad_l, pad_r);
    }
}

/* One round: times every implementation of every algorithm for one op, updating *best. */
static int bench_round(const context *ctx, const op_case *oc, const dnnl_memory_desc_t *mds,
                       best_impl *best) {
    static const struct {
        dnnl_alg_kind_t alg;
        const char *name;
    } algs[] = {
        {dnnl_convolution_direct, "direct"},
        {dnnl_convolution_auto, "auto"},
        {dnnl_convolution_winograd, "winograd"},
    };
    size_t alg_count = ctx->opts->direct_only ? 1 : sizeof algs / sizeof algs[0];
    best->seen_count = 0;
    for (size_t a = 0; a < alg_count; a++) {
        dnnl_convolution_desc_t desc, fwd_desc;
        dnnl_primitive_desc_t hint = NULL;
        dnnl_primitive_desc_iterator_t it = NULL;
        dnnl_status_t st = init_desc(ctx, oc, algs[a].alg, mds, &desc);
        if (st != dnnl_success) {
            if (ctx->opts->verbose)
                fprintf(stderr, "  %-8s descriptor: %s\n", algs[a].name, dnnl_status2str(st));
            continue;
        }
        /* Backward primitives take the forward one as a hint, as benchdnn passes it. */
        if (oc->op != CG_OP_FWD) {
            op_case fwd = {CG_OP_FWD, 0, "fwd"};
            if (init_desc(ctx, &fwd, algs[a].alg, mds, &fwd_desc) != dnnl_success ||
                dnnl_primitive_desc_create(&hint, &fwd_desc, NULL, ctx->engine, NULL) !=
                    dnnl_success)
                hint = NULL;
        }
        st = dnnl_primitive_desc_iterator_create(&it, &desc, NULL, ctx->engine, hint);
        if (st != dnnl_success) {
            if (ctx->opts->verbose)
                fprintf(stderr, "  %-8s no implementation: %s\n", algs[a].name,
                        dnnl_status2str(st));
            if (hint) dnnl_primitive_desc_destroy(hint);
            continue;
        }
        int rc = 0;
        do {
            dnnl_primitive_desc_t pd = dnnl_primitive_desc_iterator_fetch(it);
            if (!pd) {
                fprintf(stderr, "dnnl_bench: dnnl_primitive_desc_iterator_fetch failed\n");
                rc = -1;
                break;
            }
            rc = bench_impl(ctx, oc, algs[a].name, pd, best);
            dnnl_primitive_desc_destroy(pd);
        } while (rc == 0 && (st = dnnl_primitive_desc_iterator_next(it)) == dnnl_success);
        if (rc == 0 && st != dnnl_success && st != dnnl_iterator_ends) {
            fprintf(stderr, "dnnl_bench: dnnl_primitive_desc_iterator_next failed: %s\n",
                    dnnl_status2str(st));
            rc = -1;
        }
        dnnl_primitive_desc_iterator_destroy(it);
        if (hint) dnnl_primitive_desc_destroy(hint);
        if (rc) return -1;
    }
    return 0;
}

/* Times one op: --rounds passes over all implementations, so that a slow spell of the machine
 * (other tenants, frequency changes) during one pass does not decide the result. The best
 * median over all passes wins. */
static int bench_op(const context *ctx, const op_case *oc, best_impl *best) {
    /* Indexed by cg_tensor: X, W, DY, and DB at its own index. */
    dnnl_memory_desc_t mds[CG_T_COUNT];
    memset(mds, 0, sizeof mds);
    memset(best, 0, sizeof *best);
    if (init_md(ctx, CG_T_X, &mds[CG_T_X]) || init_md(ctx, CG_T_W, &mds[CG_T_W]) ||
        init_md(ctx, CG_T_DY, &mds[CG_T_DY]) || init_md(ctx, CG_T_DB, &mds[CG_T_DB]))
        return -1;
    for (int round = 0; round < ctx->opts->rounds; round++) {
        if (ctx->opts->verbose) fprintf(stderr, " round %d\n", round + 1);
        if (bench_round(ctx, oc, mds, best)) return -1;
    }
    return 0;
}

/* Writes a JSON string (impl names and problem strings need no escaping beyond this). */
static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void report(const context *ctx, const char *problem, const char *op, const best_impl *best) {
    double gflop = cg_problem_flops(ctx->problem) * 1e-9;
    const options *o = ctx->opts;
    if (o->json) {
        printf("{\"problem\": ");
        json_string(problem);
        printf(", \"op\": ");
        json_string(op);
        printf(", \"impl\": ");
        if (best && best->found) {
            json_string(best->impl);
            printf(", \"alg\": \"%s\", \"formats\": ", best->alg);
            json_string(best->formats);
            printf(", \"layout\": \"%s\", \"threads\": %d, \"gflop\": %.6f, \"median_ms\": %.4f"
                   ", \"min_ms\": %.4f, \"max_ms\": %.4f, \"runs\": %d, \"timings\": %d"
                   ", \"gflops\": %.2f}\n",
                   o->plain ? "plain" : "any", o->threads, gflop, best->median_ms, best->min_ms,
                   best->max_ms, best->runs, best->tried, gflop / (best->median_ms * 1e-3));
        } else {
            printf("null, \"layout\": \"%s\", \"threads\": %d, \"gflop\": %.6f, \"median_ms\": "
                   "null, \"min_ms\": null, \"max_ms\": null, \"gflops\": null, \"note\": "
                   "\"%s\"}\n",
                   o->plain ? "plain" : "any", o->threads, gflop,
                   best ? "no oneDNN implementation" : "bias gradient alone is not timed");
        }
    } else if (best && best->found) {
        printf("%s  %-15s  %-26s %10.3f ms %8.1f GFLOP/s\n", problem, op, best->impl,
               best->median_ms, gflop / (best->median_ms * 1e-3));
    } else {
        printf("%s  %-15s  %-26s %10s    %8s\n", problem, op, best ? "none" : "n/a", "-", "-");
    }
    fflush(stdout);
}

static void usage(FILE *out) {
    fprintf(out, "usage: dnnl_bench PROBLEM_STRING [--threads T] [--reps R] [--min-ms M]\n"
                 "                  [--rounds N] [--layout any|plain] [--direct-only]\n"
                 "                  [--with-ref] [--json] [--verbose]\n"
                 "  times every oneDNN implementation of each op of the problem and prints\n"
                 "  the fastest (defaults: --threads 2 --reps 10 --min-ms 200 --rounds 3\n"
                 "  --layout any)\n"
                 "  --rounds N     passes over all implementations; the best median wins\n"
                 "  --direct-only  only the direct algorithm (no winograd)\n"
                 "  --with-ref     also time the reference kernels (seconds each)\n"
                 "  --verbose      every implementation's time on stderr\n");
}

static int parse_int(const char *text, int min, int *value) {
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end || v < min || v > 1000000) return -1;
    *value = (int)v;
    return 0;
}

int main(int argc, char **argv) {
    options opts = {.threads = 2, .reps = 10, .min_ms = 200.0, .rounds = 3};
    const char *problem_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            opts.json = 1;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            opts.verbose = 1;
        } else if (strcmp(a, "--with-ref") == 0) {
            opts.with_ref = 1;
        } else if (strcmp(a, "--direct-only") == 0) {
            opts.direct_only = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (parse_int(v, 1, &opts.threads)) goto bad_value;
            i++;
        } else if (strcmp(a, "--rounds") == 0 && v) {
            if (parse_int(v, 1, &opts.rounds)) goto bad_value;
            i++;
        } else if (strcmp(a, "--reps") == 0 && v) {
            if (parse_int(v, 1, &opts.reps)) goto bad_value;
            i++;
        } else if (strcmp(a, "--min-ms") == 0 && v) {
            char *end;
            opts.min_ms = strtod(v, &end);
            if (*v == '\0' || *end || !(opts.min_ms >= 0)) goto bad_value;
            i++;
        } else if (strcmp(a, "--layout") == 0 && v) {
            if (strcmp(v, "any") && strcmp(v, "plain")) goto bad_value;
            opts.plain = strcmp(v, "plain") == 0;
            i++;
        } else if (a[0] != '-' && !problem_text) {
            problem_text = a;
        } else {
            fprintf(stderr, "dnnl_bench: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        continue;
    bad_value:
        fprintf(stderr, "dnnl_bench: bad value '%s' for %s\n", v, a);
        return 2;
    }
    if (!problem_text) {
        usage(stderr);
        return 2;
    }

    cg_problem problem;
    char msg[CG_MSG_MAX];
    cg_status status = cg_problem_parse_string(problem_text, &problem, msg);
    if (status != CG_OK) {
        fprintf(stderr, "dnnl_bench: %s: %s\n", problem_text, msg);
        return 2;
    }
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(&problem, canonical);
    static const dnnl_data_type_t dtypes[] = {
        [CG_F32] = dnnl_f32, [CG_F16] = dnnl_f16, [CG_BF16] = dnnl_bf16};

    /* Before oneDNN's first parallel region, so the pool is created at this size. */
    omp_set_num_threads(opts.threads);
    context ctx = {.problem = &problem, .opts = &opts, .dtype = dtypes[problem.dtype]};
    int rc = 1;
    best_impl *best = calloc(1, sizeof *best);
    if (!best) {
        fprintf(stderr, "dnnl_bench: out of memory\n");
        return 1;
    }
    DNNL_TRY(dnnl_engine_create(&ctx.engine, dnnl_cpu, 0));
    DNNL_TRY(dnnl_stream_create(&ctx.stream, ctx.engine, dnnl_stream_default_flags));
    if (omp_get_max_threads() != opts.threads)
        fprintf(stderr, "dnnl_bench: warning: OpenMP reports %d threads, asked for %d\n",
                omp_get_max_threads(), opts.threads);

    int bias = (problem.ops & CG_OP_BWD_BIAS) != 0;
    const op_case cases[] = {
        {CG_OP_FWD, 0, "fwd"},
        {CG_OP_BWD_DATA, 0, "bwd_data"},
        {CG_OP_BWD_WEIGHT, bias, bias ? "bwd_weight+bias" : "bwd_weight"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!(problem.ops & cases[i].op)) continue;
        if (opts.verbose) fprintf(stderr, "%s %s:\n", canonical, cases[i].label);
        if (bench_op(&ctx, &cases[i], best)) goto fail;
        report(&ctx, canonical, cases[i].label, best);
    }
    /* The bias gradient is timed with bwd_weight; on its own oneDNN has no primitive for it. */
    if (bias && !(problem.ops & CG_OP_BWD_WEIGHT)) report(&ctx, canonical, "bwd_bias", NULL);
    rc = 0;
fail:
    free(best);
    if (ctx.stream) dnnl_stream_destroy(ctx.stream);
    if (ctx.engine) dnnl_engine_destroy(ctx.engine);
    return rc;
}
