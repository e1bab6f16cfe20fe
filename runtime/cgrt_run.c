/* cgrt_run.c: run an executable's steps. CPU: OpenMP over work items, one parallel region per
 * group of concurrent steps (a barrier between groups, since later steps read what earlier
 * ones wrote). */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt_internal.h"

/* Work items per chunk: small enough that a dynamic schedule balances steps of unequal cost
 * (about 8 chunks per thread per region), large enough that the scheduling cost is noise. */
static int64_t chunk_size(int64_t items, int threads) {
    int64_t chunk = items / ((int64_t)threads * 8);
    return chunk < 1 ? 1 : chunk;
}

static void run_items(const cgrt_step *s, int64_t begin, int64_t end, void *const *buffers) {
    cg_kernel_params params;
    memset(&params, 0, sizeof params);
    params.work_begin = (int32_t)begin;
    params.work_end = (int32_t)end;
    params.thread = omp_get_thread_num();
    s->fn(&params, buffers);
}

/* One chunk: its step's items (and each paired step's same items right after). */
static void run_chunk(const cgrt_executable *exe, int first, int count, const int64_t *starts,
                      const int64_t *sizes, int64_t chunk, void *const *buffers) {
    int i = 0;
    while (chunk >= starts[i + 1]) i++;
    const cgrt_step *s = &exe->steps[first + i];
    int64_t begin = (chunk - starts[i]) * sizes[i];
    int64_t end = begin + sizes[i] < s->work_items ? begin + sizes[i] : s->work_items;
    int chain = 1;
    while (i + chain < count && s[chain].paired) chain++;
    if (chain == 1) {
        run_items(s, begin, end, buffers);
        return;
    }
    for (int64_t item = begin; item < end; item++)
        for (int f = 0; f < chain; f++) run_items(&s[f], item, item + 1, buffers);
}

/* A share's next chunk, on a line of its own (no false sharing between the counters). */
typedef struct share_cursor {
    _Alignas(64) _Atomic int64_t next;
} share_cursor;

/* Steps marked paired take no chunks of their own: their lead (the nearest step before that
 * is not paired) runs each of its items and then the same item of every paired step after
 * it, in order, while that item's data is still in this core's cache.
 *
 * A region of one step (with its paired ones) is cut into one contiguous share of chunks per
 * thread; a thread runs its own share first, then helps with the others' (taking their next
 * chunks). Balanced, every call gives a core the same items, whose data may still be in its
 * L2 from the call before (MobileNet's 7x7 dw, 1.6 MiB a core: 0.076 -> 0.070 ms, 14x14
 * stride 2 0.076 -> 0.069, against a dynamic schedule); unbalanced (a busy neighbour), the
 * idle thread takes over the rest as a dynamic schedule would. Regions of several steps
 * (stride phases of unequal cost) keep a dynamic schedule, both threads on one step at a
 * time: split into shares, ResNet's 14x14 stride-2 dx ran 3-4% slower. Its chunks come from
 * one shared counter, not libomp's schedule(dynamic, 1), which took 6.5 us to hand out 16
 * chunks on two threads of the Intel Xeon against 1.5 us (an empty region: 0.9 us), a cost
 * every small problem paid per region. */
/* Runs the chunks a cursor hands out, until `end`. */
static void drain(share_cursor *cursor, int64_t end, const cgrt_executable *exe, int first,
                  int count, const int64_t *starts, const int64_t *sizes, void *const *buffers) {
    for (;;) {
        const int64_t chunk = atomic_fetch_add_explicit(&cursor->next, 1, memory_order_relaxed);
        if (chunk >= end) return;
        run_chunk(exe, first, count, starts, sizes, chunk, buffers);
    }
}

static void run_region(const cgrt_executable *exe, int first, int last, void *const *buffers,
                       int threads) {
    int64_t starts[CG_MAX_STEPS_RT + 1], sizes[CG_MAX_STEPS_RT];
    int count = last - first;
    starts[0] = 0;
    for (int i = 0; i < count; i++) {
        const cgrt_step *s = &exe->steps[first + i];
        sizes[i] = chunk_size(s->work_items, threads);
        starts[i + 1] = starts[i] + (s->paired ? 0 : (s->work_items + sizes[i] - 1) / sizes[i]);
    }
    const int64_t total = starts[count];
    if (starts[1] < total) { /* steps side by side: dynamic, the threads on one step at a time */
        share_cursor shared;
        atomic_init(&shared.next, 0);
#pragma omp parallel num_threads(threads)
        drain(&shared, total, exe, first, count, starts, sizes, buffers);
        return;
    }
    share_cursor cursors[threads];
    for (int t = 0; t < threads; t++) atomic_init(&cursors[t].next, t * total / threads);
#pragma omp parallel num_threads(threads)
    {
        const int me = omp_get_thread_num();
        for (int k = 0; k < threads; k++) { /* own share first; shares without a thread too */
            const int share = (me + k) % threads;
            drain(&cursors[share], (share + 1) * total / threads, exe, first, count, starts,
                  sizes, buffers);
        }
    }
}

cg_status cgrt_run(const cgrt_executable *exe, void *const tensors[CG_T_COUNT], void *workspace,
                   int threads, char msg[CG_MSG_MAX]) {
    const cg_problem *p = &exe->problem;
    for (int t = 0; t < CG_T_COUNT; t++)
        if ((cg_problem_reads(p, (cg_tensor)t) || cg_problem_writes(p, (cg_tensor)t)) &&
            !tensors[t]) {
            snprintf(msg, CG_MSG_MAX, "%s: tensor %s is required but NULL", p->name,
                     cg_tensor_name((cg_tensor)t));
            return CG_ERR_INVALID;
        }
    if (exe->target == CGRT_TARGET_VULKAN) return cgrt_vulkan_run(exe, tensors, msg);
    if (exe->step_count > CG_MAX_STEPS_RT) {
        snprintf(msg, CG_MSG_MAX, "%s: %d steps exceed the runtime's %d", p->name,
                 exe->step_count, CG_MAX_STEPS_RT);
        return CG_ERR_PACK;
    }
    void *owned = NULL;
    if (!workspace && exe->workspace_bytes > 0) {
        owned = cg_alloc_lines((size_t)exe->workspace_bytes);
        if (!owned) {
            snprintf(msg, CG_MSG_MAX, "%s: cannot allocate %lld bytes of workspace", p->name,
                     (long long)exe->workspace_bytes);
            return CG_ERR_NOMEM;
        }
        workspace = owned;
    }
    void *buffers[CG_BUF_COUNT];
    for (int t = 0; t < CG_T_COUNT; t++) buffers[t] = tensors[t];
    buffers[CG_BUF_WORKSPACE] = workspace;
    if (threads <= 0) threads = omp_get_max_threads();
    /* CONVGRAD_PROFILE=1 prints each region's wall time and kernels to stderr. */
    const char *profile_env = getenv("CONVGRAD_PROFILE");
    int profile = profile_env && *profile_env == '1';
    for (int first = 0; first < exe->step_count;) {
        int last = first + 1;
        while (last < exe->step_count && exe->steps[last].concurrent) last++;
        double start = profile ? omp_get_wtime() : 0;
        run_region(exe, first, last, buffers, threads);
        if (profile) {
            fprintf(stderr, "profile: %8.3f ms", 1e3 * (omp_get_wtime() - start));
            for (int i = first; i < last; i++) fprintf(stderr, " %s", exe->steps[i].kernel);
            fputc('\n', stderr);
        }
        first = last;
    }
    free(owned);
    return CG_OK;
}
