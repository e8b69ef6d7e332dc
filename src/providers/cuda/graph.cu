/* CUDA graph capture for static-shape runs (provider option cuda_graph = 1,
 * off by default), on the provider interface's begin_run/end_run pair.
 *
 * A session's runs go through three phases:
 *   - warm-up: runs execute as usual (cuDNN picks its algorithms, cuBLAS
 *     its workspaces, the session records and installs its memory plan),
 *     and the device memory the session allocates is noted in order and
 *     kept, not freed, so the next phase can hand out the same addresses;
 *   - capture: the third run with the same inputs is recorded into a CUDA
 *     graph (stream capture) instead of running; allocations are served
 *     from the warm-up run's list, in the same order, and each kernel call's
 *     outputs are noted; end_run instantiates the graph and launches it;
 *   - replay: later runs launch nothing per node: each call only places its
 *     outputs at the captured addresses (checked), and end_run launches the
 *     graph once.
 *
 * What cannot be captured is refused with an error naming it, never run
 * wrongly: inputs of another shape, dtype or device buffer than the
 * captured run's (CUDA graphs need static shapes and bound buffers), a
 * copy between host and device inside the run (a node on another provider,
 * or inputs and outputs not bound on the device with I/O binding), or an
 * allocation sequence that differs from the warm-up run's. A graph run
 * holds the provider's lock from begin_run to end_run: runs on the device
 * are serialised while the option is on. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "cuda_common.h"

enum { WARM_RUNS = 2 };
enum graph_mode { MODE_IDLE, MODE_WARM, MODE_CAPTURE, MODE_REPLAY };

typedef struct cu_alloc_rec {
    size_t n;
    void *p;
    bool held;                     /* the session holds it (not given back yet) */
} cu_alloc_rec;

/* One kernel call's outputs (the order cu_out was called in). */
typedef struct cu_out_rec {
    size_t call, k;
    int32_t dtype, rank;
    int64_t dims[CU_MAX_RANK];
    const void *data;
} cu_out_rec;

struct cu_graph {
    enum graph_mode mode;
    int warm_runs;                 /* successful warm-up runs with this signature */
    bool captured;
    int64_t *sig;                  /* the inputs the runs were made with */
    size_t sig_len;
    cu_alloc_rec *allocs;          /* the warm-up run's allocations, kept */
    size_t n_allocs, cap_allocs, cursor;
    void **dropped;                /* forgotten ones the session still holds: freed when given back */
    size_t n_dropped, cap_dropped;
    cu_out_rec *outs;              /* the captured calls' outputs */
    size_t n_outs, cap_outs, out_cursor;
    size_t calls;                  /* kernel calls of this run */
    cudaGraphExec_t exec;
    char broken[400];              /* why this run cannot go on, "" if it can */
};

static onyx_status *graph_error(const char *what) {
    return cu_host->error(ONYX_ERR_INVALID_ARGUMENT,
                          "cuda provider: cuda_graph = 1 cannot run this: %s; CUDA graphs need static input "
                          "shapes, inputs and outputs bound on the device (onyx_io_binding) and every node on CUDA "
                          "(turn the option off otherwise)", what);
}

onyx_status *cu_graph_create(cu_graph **out) {
    *out = (cu_graph *)calloc(1, sizeof **out);
    return *out ? NULL : cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda provider: out of memory");
}

/* Free the kept allocations the session gave back (stream-ordered); the
 * ones it still holds are freed when it does. */
static void forget_allocs(cu_graph *g) {
    for (size_t i = 0; i < g->n_allocs; i++) {
        if (!g->allocs[i].held) {
            cudaFreeAsync(g->allocs[i].p, cu_dev.stream);
            continue;
        }
        if (g->n_dropped == g->cap_dropped) {
            size_t cap = g->cap_dropped ? 2 * g->cap_dropped : 16;
            void **grown = (void **)realloc(g->dropped, cap * sizeof *grown);
            if (!grown) continue;   /* leaked rather than freed under the session */
            g->dropped = grown;
            g->cap_dropped = cap;
        }
        g->dropped[g->n_dropped++] = g->allocs[i].p;
    }
    g->n_allocs = 0;
}

/* Forget the kept allocations and the captured graph. */
static void forget(cu_graph *g) {
    forget_allocs(g);
    g->n_outs = 0;
    if (g->exec) cudaGraphExecDestroy(g->exec);
    g->exec = NULL;
    g->captured = false;
    g->warm_runs = 0;
}

void cu_graph_destroy(cu_graph *g) {
    if (!g) return;
    cu_lock_take();
    forget(g);
    for (size_t i = 0; i < g->n_dropped; i++) cudaFreeAsync(g->dropped[i], cu_dev.stream);
    for (size_t i = 0; i < g->n_allocs; i++) cudaFreeAsync(g->allocs[i].p, cu_dev.stream);
    cu_lock_drop();
    free(g->allocs);
    free(g->dropped);
    free(g->outs);
    free(g->sig);
    free(g);
}

/* dtype, rank, dims and where each input is: the device address for device
 * tensors (a replay reads the same buffer), a hash of the bytes for host
 * ones (their values are read while capturing). */
static onyx_status *signature(const onyx_ep_run_info *run, int64_t **out, size_t *len) {
    size_t n = 0;
    for (size_t i = 0; i < run->n_inputs; i++) n += 4 + (size_t)(run->inputs[i].rank > 0 ? run->inputs[i].rank : 0);
    int64_t *s = (int64_t *)malloc((n + 1) * sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda provider: out of memory");
    size_t at = 0;
    for (size_t i = 0; i < run->n_inputs; i++) {
        const onyx_ep_tensor *t = &run->inputs[i];
        s[at++] = t->dtype;
        s[at++] = t->rank;
        for (int d = 0; d < t->rank; d++) s[at++] = t->dims[d];
        s[at++] = t->on_host;
        uint64_t h = 1469598103934665603ull;
        if (t->on_host)
            for (size_t b = 0; b < t->nbytes; b++) h = (h ^ ((const uint8_t *)t->data)[b]) * 1099511628211ull;
        else h = (uint64_t)(uintptr_t)t->data;
        s[at++] = (int64_t)h;
    }
    *out = s;
    *len = at;
    return NULL;
}

onyx_status *cu_graph_begin(cu_graph *g, const onyx_ep_run_info *run) {
    int64_t *sig = NULL;
    size_t len = 0;
    CU_TRY_STATUS(signature(run, &sig, &len));
    cu_lock_take();   /* held until cu_graph_end */
    bool same = g->sig && len == g->sig_len && !memcmp(sig, g->sig, len * sizeof *sig);
    if (g->captured && !same) {
        free(sig);
        cu_lock_drop();
        return graph_error("the inputs differ from the captured run's (shape, element type or bound device buffer)");
    }
    if (!same) {
        forget(g);
        free(g->sig);
        g->sig = sig;
        g->sig_len = len;
    } else {
        free(sig);
    }
    g->broken[0] = 0;
    g->cursor = g->out_cursor = g->calls = 0;
    if (g->captured) {
        g->mode = MODE_REPLAY;
        return NULL;
    }
    if (g->warm_runs < WARM_RUNS) {   /* the last warm-up run's allocations are the ones kept */
        forget_allocs(g);
        g->mode = MODE_WARM;
        return NULL;
    }
    g->n_outs = 0;
    cudaError_t e = cudaStreamBeginCapture(cu_dev.stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        cu_lock_drop();
        return cu_host->error(ONYX_ERR_RUNTIME, "cuda provider: cudaStreamBeginCapture failed: %s",
                              cudaGetErrorString(e));
    }
    g->mode = MODE_CAPTURE;
    return NULL;
}

static onyx_status *launch(cu_graph *g) {
    CU_TRY(cudaGraphLaunch(g->exec, cu_dev.stream));
    CU_TRY(cudaStreamSynchronize(cu_dev.stream));
    return cu_check_bad_index();
}

/* End the capture: instantiate the graph and run it. */
static onyx_status *finish_capture(cu_graph *g, bool ok) {
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(cu_dev.stream, &graph);
    if (!ok) {
        if (graph) cudaGraphDestroy(graph);
        return NULL;
    }
    if (e != cudaSuccess)
        return cu_host->error(ONYX_ERR_RUNTIME, "cuda provider: the run could not be captured (cudaStreamEndCapture: %s)",
                              cudaGetErrorString(e));
    e = cudaGraphInstantiate(&g->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
        g->exec = NULL;
        return cu_host->error(ONYX_ERR_RUNTIME, "cuda provider: cudaGraphInstantiate failed: %s", cudaGetErrorString(e));
    }
    g->captured = true;
    return launch(g);
}

onyx_status *cu_graph_end(cu_graph *g, int failed) {
    onyx_status *st = NULL;
    bool ok = !failed && !g->broken[0];
    if (g->broken[0]) st = graph_error(g->broken);
    if (g->mode == MODE_WARM) {
        g->warm_runs = ok ? g->warm_runs + 1 : 0;
    } else if (g->mode == MODE_CAPTURE) {
        onyx_status *cst = finish_capture(g, ok);
        if (cst && !st) st = cst;
        else if (cst) cu_host->status_free(cst);
        if (!ok || st) forget(g);
    } else if (g->mode == MODE_REPLAY) {
        if (ok && g->out_cursor != g->n_outs)
            st = graph_error("the run made fewer kernel calls than the captured one");
        if (ok && !st) st = launch(g);
        if (!ok || st) forget(g);   /* a stale graph is captured again after a new warm-up */
    }
    g->mode = MODE_IDLE;
    cu_lock_drop();
    return st;
}

static void note_broken(cu_graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_broken(cu_graph *g, const char *fmt, ...) {
    if (g->broken[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->broken, sizeof g->broken, fmt, ap);
    va_end(ap);
}

bool cu_graph_alloc(cu_graph *g, size_t n, void **out) {
    if (!g || g->mode == MODE_IDLE) return false;
    if (g->mode == MODE_WARM) {
        if (g->n_allocs == g->cap_allocs) {
            size_t cap = g->cap_allocs ? 2 * g->cap_allocs : 64;
            cu_alloc_rec *grown = (cu_alloc_rec *)realloc(g->allocs, cap * sizeof *grown);
            if (!grown) {
                *out = NULL;
                return true;
            }
            g->allocs = grown;
            g->cap_allocs = cap;
        }
        void *d = NULL;
        *out = cudaMallocAsync(&d, n, cu_dev.stream) == cudaSuccess ? d : NULL;
        if (*out) g->allocs[g->n_allocs++] = (cu_alloc_rec){n, d, true};
        return true;
    }
    /* capture and replay: the warm-up run's addresses, in order */
    size_t i = g->cursor++;
    if (i >= g->n_allocs || g->allocs[i].n < n) {
        note_broken(g, "device allocation %zu of the run (%zu bytes) differs from the warm-up run's (%zu allocations)",
                    i, n, g->n_allocs);
        *out = NULL;
        return true;
    }
    g->allocs[i].held = true;
    *out = g->allocs[i].p;
    return true;
}

bool cu_graph_keeps(cu_graph *g, void *ptr) {
    if (!g) return false;
    for (size_t i = 0; i < g->n_allocs; i++)
        if (g->allocs[i].p == ptr) {
            g->allocs[i].held = false;
            return true;
        }
    for (size_t i = 0; i < g->n_dropped; i++)
        if (g->dropped[i] == ptr) {
            g->dropped[i] = g->dropped[--g->n_dropped];
            return false;   /* forgotten: the caller frees it now */
        }
    return false;
}

onyx_status *cu_graph_check_copy(cu_graph *g, onyx_ep_copy_kind kind) {
    if (!g || g->mode == MODE_IDLE || kind == ONYX_EP_DEVICE_TO_DEVICE) return NULL;
    if (!g->broken[0])
        snprintf(g->broken, sizeof g->broken, "the run copies %s",
             kind == ONYX_EP_HOST_TO_DEVICE ? "from the host to the device" : "from the device to the host");
    return graph_error(g->broken);
}

void cu_graph_note_output(cu_graph *g, size_t k, int32_t dtype, int32_t rank, const int64_t *dims, const void *data) {
    if (g->n_outs == g->cap_outs) {
        size_t cap = g->cap_outs ? 2 * g->cap_outs : 64;
        cu_out_rec *grown = (cu_out_rec *)realloc(g->outs, cap * sizeof *grown);
        if (!grown) {
            note_broken(g, "out of memory noting output %zu of kernel call %zu", k, g->calls);
            return;
        }
        g->outs = grown;
        g->cap_outs = cap;
    }
    cu_out_rec *r = &g->outs[g->n_outs++];
    *r = (cu_out_rec){g->calls, k, dtype, rank, {0}, data};
    for (int d = 0; d < rank && d < CU_MAX_RANK; d++) r->dims[d] = dims[d];
}

/* Replay one call: its outputs where the capture put them. */
static onyx_status *replay_call(cu_graph *g, cu_call *c) {
    for (; g->out_cursor < g->n_outs && g->outs[g->out_cursor].call == g->calls; g->out_cursor++) {
        const cu_out_rec *r = &g->outs[g->out_cursor];
        onyx_ep_tensor t;
        CU_TRY_STATUS(cu_host->ctx_output(c->ctx, r->k, r->dtype, r->rank, r->dims, &t));
        if (t.data != r->data) {
            note_broken(g, "output %zu of kernel call %zu moved since the capture", r->k, g->calls);
            return graph_error(g->broken);
        }
    }
    return NULL;
}

onyx_status *cu_graph_compute(cu_graph *g, cu_call *c, bool *done) {
    *done = false;
    if (!g || g->mode == MODE_IDLE) return NULL;
    if (g->broken[0]) return graph_error(g->broken);
    if (g->mode == MODE_CAPTURE) c->capture = g;
    if (g->mode != MODE_REPLAY) return NULL;
    *done = true;
    onyx_status *st = replay_call(g, c);
    g->calls++;
    return st;
}

onyx_status *cu_graph_after_call(cu_graph *g, onyx_status *st) {
    if (!g || g->mode == MODE_IDLE) return st;
    if (g->mode == MODE_CAPTURE) g->calls++;
    if (g->broken[0] && !st) st = graph_error(g->broken);
    return st;
}
