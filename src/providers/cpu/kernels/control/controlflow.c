/* Control flow: If, Loop, Scan. Each node's subgraphs get their own plan at
 * init (session/subgraph.c); compute runs them against the enclosing run so
 * outer-scope values are visible without copies. */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/subgraph.h"

typedef struct cf_state {
    size_t n;
    onyx_subgraph *sub[2];
} cf_state;

static void cf_free(void *p) {
    cf_state *s = p;
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) onyx_subgraph_free(s->sub[i]);
    free(s);
}

static const onyx_graph *node_subgraph(const onyx_node *n, const char *attr) {
    for (size_t i = 0; i < n->n_subgraphs; i++)
        if (!strcmp(n->subgraph_attr_names[i], attr)) return n->subgraphs[i];
    return NULL;
}

static onyx_status *cf_init_named(const onyx_kernel_info *info, void **state, const char *a,
                                  const char *b) {
    cf_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    const char *names[2] = {a, b};
    for (size_t i = 0; i < 2 && names[i]; i++) {
        const onyx_graph *g = node_subgraph(info->node, names[i]);
        if (!g) {
            cf_free(s);
            return ONYX_INVALID_MODEL("missing graph attribute '%s'", names[i]);
        }
        onyx_status *st = onyx_subgraph_create(info, g, &s->sub[i]);
        if (st) {
            cf_free(s);
            return onyx_error_wrap(st, "subgraph '%s': ", names[i]);
        }
        s->n = i + 1;
    }
    *state = s;
    return NULL;
}

/* Hand subgraph results to the node's outputs (all owned). */
static onyx_status *emit(onyx_kernel_ctx *ctx, onyx_value **vals, size_t n) {
    onyx_status *st = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!st && i < ctx->n_out && ctx->out_used[i]) {
            st = onyx_kernel_set_output(ctx, i, vals[i]);
        } else {
            onyx_value_destroy(vals[i]);
        }
        vals[i] = NULL;
    }
    return st;
}

static bool scalar_true(const onyx_value *v) {
    if (!v || v->numel < 1) return false;
    if (v->dtype == ONYX_BOOL || v->dtype == ONYX_UINT8 || v->dtype == ONYX_INT8) return ((const uint8_t *)v->data)[0] != 0;
    return onyx_load_as_double(v->dtype, v->data, 0) != 0;
}

/* ------------------------------------------------------------------ If */

static onyx_status *if_init(const onyx_kernel_info *info, void **state) {
    return cf_init_named(info, state, "then_branch", "else_branch");
}

static onyx_status *if_compute(onyx_kernel_ctx *ctx) {
    const cf_state *s = ctx->state;
    const onyx_value *cond = ctx->in[0];
    if (!onyx_is_tensor(cond) || cond->numel != 1)
        return ONYX_INVALID_ARG("If: cond must be a tensor with one element");
    const onyx_subgraph *branch = s->sub[scalar_true(cond) ? 0 : 1];
    const onyx_graph *g = onyx_subgraph_graph(branch);
    if (g->n_outputs != ctx->n_out)
        return ONYX_INVALID_MODEL("If: the branch has %zu outputs but the node has %zu", g->n_outputs, ctx->n_out);
    onyx_value **outs = calloc(g->n_outputs + 1, sizeof *outs);
    if (!outs) return ONYX_OOM();
    onyx_status *st = onyx_subgraph_run(branch, ctx, NULL, 0, outs);
    if (!st) st = emit(ctx, outs, g->n_outputs);
    free(outs);
    return st;
}

/* ------------------------------------------------------ stacking helper */

/* Stack n same-shaped tensors along a new axis (0 <= axis <= rank). */
static onyx_status *build_stack(onyx_value *const *items, size_t n, int axis, bool reverse,
                                const onyx_type *elem_hint, onyx_value **out) {
    int64_t dims[ONYX_MAX_RANK];
    int rank;
    int dtype;
    if (n == 0) {
        /* no iterations: an empty tensor, shaped from the body's static type */
        dtype = elem_hint && elem_hint->dtype ? elem_hint->dtype : ONYX_FLOAT;
        rank = elem_hint && elem_hint->rank >= 0 && elem_hint->rank < ONYX_MAX_RANK ? elem_hint->rank : 0;
        for (int i = 0; i < rank; i++) dims[i] = onyx_dim_known(elem_hint->dims[i]) ? elem_hint->dims[i] : 0;
    } else {
        dtype = items[0]->dtype;
        rank = items[0]->rank;
        memcpy(dims, items[0]->dims, sizeof dims);
    }
    if (rank + 1 > ONYX_MAX_RANK) return ONYX_INVALID_ARG("stacked rank exceeds %d", ONYX_MAX_RANK);
    if (axis < 0 || axis > rank) return ONYX_INVALID_ARG("scan output axis %d out of range for rank %d", axis, rank);
    for (size_t i = 0; i < n; i++) {
        if (!onyx_is_tensor(items[i]) || items[i]->dtype != dtype || items[i]->rank != rank ||
            memcmp(items[i]->dims, dims, (size_t)rank * sizeof *dims))
            return ONYX_RUNTIME_ERROR("a scan output changes type or shape between iterations");
        if (dtype == ONYX_STRING) return ONYX_NOT_IMPLEMENTED("string scan outputs are not supported");
        if (onyx_dtype(dtype)->bits < 8) return ONYX_NOT_IMPLEMENTED("sub-byte scan outputs are not supported");
    }
    int64_t odims[ONYX_MAX_RANK];
    for (int i = 0, j = 0; i <= rank; i++) odims[i] = i == axis ? (int64_t)n : dims[j++];
    onyx_value *y;
    ONYX_TRY(onyx_tensor_new(dtype, rank + 1, odims, &y));
    *out = y;
    size_t esize = onyx_dtype(dtype)->bits / 8;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= dims[i];
    for (int i = axis; i < rank; i++) inner *= dims[i];
    size_t block = (size_t)inner * esize;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *src = items[reverse ? n - 1 - k : k]->data;
        for (int64_t o = 0; o < outer; o++)
            memcpy((uint8_t *)y->data + ((size_t)o * n + k) * block, src + (size_t)o * block, block);
    }
    return NULL;
}

static onyx_status *stack(onyx_kernel_ctx *ctx, size_t out_index, onyx_value **items, size_t n,
                          int axis, bool reverse, const onyx_type *elem_hint) {
    onyx_value *y;
    ONYX_TRY(build_stack(items, n, axis, reverse, elem_hint, &y));
    return onyx_kernel_set_output(ctx, out_index, y);
}

/* Slice index i along axis (removing the axis), into a new owned tensor. */
static onyx_status *slice_axis(const onyx_value *x, int axis, int64_t i, onyx_value **out) {
    int64_t dims[ONYX_MAX_RANK];
    for (int d = 0, j = 0; d < x->rank; d++)
        if (d != axis) dims[j++] = x->dims[d];
    if (x->dtype == ONYX_STRING || onyx_dtype(x->dtype)->bits < 8)
        return ONYX_NOT_IMPLEMENTED("Scan over %s tensors is not supported", onyx_dtype_name(x->dtype));
    onyx_value *y;
    ONYX_TRY(onyx_tensor_new(x->dtype, x->rank - 1, dims, &y));
    size_t esize = onyx_dtype(x->dtype)->bits / 8;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    size_t block = (size_t)inner * esize;
    for (int64_t o = 0; o < outer; o++)
        memcpy((uint8_t *)y->data + (size_t)o * block,
               (const uint8_t *)x->data + ((size_t)o * x->dims[axis] + i) * block, block);
    *out = y;
    return NULL;
}

/* ---------------------------------------------------------------- Loop */

static onyx_status *loop_init(const onyx_kernel_info *info, void **state) {
    return cf_init_named(info, state, "body", NULL);
}

typedef struct loop_run {
    size_t n_carried, n_scan;
    onyx_value **carried;     /* owned current values (or borrowed initial ones) */
    bool *carried_owned;
    /* two buffers per body output 0..n_carried (cond, then the carried
     * values): iteration it has the body write into bufs[2 k + it % 2]
     * while it reads the other one, so after the first two iterations the
     * loop allocates nothing for them. carried[i] may point into bufs. */
    onyx_value **bufs;
    onyx_value ***scans;      /* per scan output: array of per-iteration values */
    size_t n_iters, cap_iters;
} loop_run;

static void loop_run_free(loop_run *r) {
    for (size_t i = 0; i < r->n_carried; i++)
        if (r->carried_owned[i]) onyx_value_destroy(r->carried[i]);
    for (size_t k = 0; r->bufs && k < 2 * (r->n_carried + 1); k++) onyx_value_destroy(r->bufs[k]);
    free(r->bufs);
    for (size_t k = 0; k < r->n_scan; k++) {
        for (size_t it = 0; r->scans && r->scans[k] && it < r->n_iters; it++) onyx_value_destroy(r->scans[k][it]);
        if (r->scans) free(r->scans[k]);
    }
    free(r->scans);
    free(r->carried);
    free(r->carried_owned);
}

static onyx_status *loop_push_scans(loop_run *r, onyx_value **body_out) {
    if (r->n_iters == r->cap_iters) {
        size_t cap = r->cap_iters ? r->cap_iters * 2 : 16;
        for (size_t k = 0; k < r->n_scan; k++) {
            onyx_value **a = realloc(r->scans[k], cap * sizeof *a);
            if (!a) return ONYX_OOM();
            r->scans[k] = a;
        }
        r->cap_iters = cap;
    }
    for (size_t k = 0; k < r->n_scan; k++) {
        r->scans[k][r->n_iters] = body_out[1 + r->n_carried + k];
        body_out[1 + r->n_carried + k] = NULL;
    }
    r->n_iters++;
    return NULL;
}

/* Body output v for buffer slot *buf: a view of the buffer (the body wrote
 * into it) is dropped, leaving the buffer; a new numeric tensor becomes the
 * slot's buffer (the old one goes). Returns the value that now holds the
 * result, owned by the slot, or NULL when v cannot be a buffer (then the
 * caller owns v). */
static onyx_value *loop_keep(onyx_value **buf, onyx_value *v) {
    if (*buf && v->data == (*buf)->data && v->kind == ONYX_VALUE_TENSOR) {
        onyx_value_destroy(v);
        return *buf;
    }
    if (v->kind != ONYX_VALUE_TENSOR || v->dtype == ONYX_STRING || v->device || !(v->flags & ONYX_VALUE_OWNS_DATA))
        return NULL;
    onyx_value_destroy(*buf);
    *buf = v;
    return v;
}

static onyx_status *loop_compute(onyx_kernel_ctx *ctx) {
    const cf_state *s = ctx->state;
    const onyx_graph *body = onyx_subgraph_graph(s->sub[0]);
    if (ctx->n_in < 2) return ONYX_INVALID_MODEL("Loop needs at least the inputs M and cond");
    size_t n_carried = ctx->n_in - 2;
    if (body->n_inputs != n_carried + 2 || body->n_outputs < n_carried + 1)
        return ONYX_INVALID_MODEL("Loop: body has %zu inputs and %zu outputs for %zu loop-carried values",
                                  body->n_inputs, body->n_outputs, n_carried);
    size_t n_scan = body->n_outputs - 1 - n_carried;
    if (ctx->n_out != n_carried + n_scan)
        return ONYX_INVALID_MODEL("Loop: the node has %zu outputs, the body gives %zu", ctx->n_out, n_carried + n_scan);
    int64_t max_trip = INT64_MAX;
    if (ctx->in[0]) {
        if (!onyx_is_tensor(ctx->in[0]) || ctx->in[0]->numel != 1 || ctx->in[0]->dtype != ONYX_INT64)
            return ONYX_INVALID_ARG("Loop: M must be an int64 scalar");
        max_trip = ((const int64_t *)ctx->in[0]->data)[0];
    }
    bool cond = ctx->in[1] ? scalar_true(ctx->in[1]) : true;
    loop_run r = {.n_carried = n_carried, .n_scan = n_scan};
    r.carried = calloc(n_carried + 1, sizeof *r.carried);
    r.carried_owned = calloc(n_carried + 1, sizeof *r.carried_owned);
    r.scans = calloc(n_scan + 1, sizeof *r.scans);
    r.bufs = calloc(2 * (n_carried + 1), sizeof *r.bufs);
    onyx_value **prov = calloc(body->n_outputs + 1, sizeof *prov);
    const onyx_value **in = calloc(n_carried + 3, sizeof *in);
    onyx_value **out = calloc(body->n_outputs + 1, sizeof *out);
    onyx_value *iter_v = NULL, *cond_v = NULL;
    onyx_status *st = NULL;
    int64_t one = 1;
    if (!r.carried || !r.carried_owned || !r.scans || !r.bufs || !prov || !in || !out) st = ONYX_OOM();
    if (!st) st = onyx_tensor_new(ONYX_INT64, 0, &one, &iter_v);
    if (!st) st = onyx_tensor_new(ONYX_BOOL, 0, &one, &cond_v);
    for (size_t i = 0; !st && i < n_carried; i++) r.carried[i] = (onyx_value *)ctx->in[2 + i];
    for (int64_t it = 0; !st && it < max_trip && cond; it++) {
        ((int64_t *)iter_v->data)[0] = it;
        ((uint8_t *)cond_v->data)[0] = cond;
        in[0] = iter_v;
        in[1] = cond_v;
        for (size_t i = 0; i < n_carried; i++) in[2 + i] = r.carried[i];
        size_t par = (size_t)(it & 1);
        for (size_t k = 0; k <= n_carried; k++) prov[k] = r.bufs[2 * k + par];
        st = onyx_subgraph_run_into(s->sub[0], ctx, in, n_carried + 2, prov, out);
        if (st) break;
        cond = scalar_true(out[0]);
        if (!loop_keep(&r.bufs[par], out[0])) onyx_value_destroy(out[0]);
        out[0] = NULL;
        for (size_t i = 0; i < n_carried; i++) {
            if (r.carried_owned[i]) onyx_value_destroy(r.carried[i]);
            onyx_value *kept = loop_keep(&r.bufs[2 * (1 + i) + par], out[1 + i]);
            r.carried[i] = kept ? kept : out[1 + i];
            r.carried_owned[i] = !kept;
            out[1 + i] = NULL;
        }
        st = loop_push_scans(&r, out);
        if (!st && r.n_iters > (size_t)1 << 26) st = ONYX_RUNTIME_ERROR("Loop: more than 2^26 iterations");
    }
    for (size_t i = 0; !st && i < n_carried; i++) {
        if (!ctx->out_used[i]) continue;
        onyx_value **in_buf = NULL;   /* the final value in a buffer: hand the buffer over */
        for (size_t k = 2 * (1 + i); k < 2 * (2 + i); k++)
            if (r.bufs[k] && r.bufs[k] == r.carried[i]) in_buf = &r.bufs[k];
        if (in_buf) {
            st = onyx_kernel_set_output(ctx, i, *in_buf);
            *in_buf = NULL;
        } else if (r.carried_owned[i]) {
            st = onyx_kernel_set_output(ctx, i, r.carried[i]);
            r.carried_owned[i] = false;
        } else if (r.carried[i]) {
            onyx_value *copy;
            st = onyx_value_clone(r.carried[i], &copy);
            if (!st) st = onyx_kernel_set_output(ctx, i, copy);
        } else {
            st = ONYX_INVALID_ARG("Loop: loop-carried value %zu has no initial value", i);
        }
    }
    for (size_t k = 0; !st && k < n_scan; k++) {
        if (!ctx->out_used[n_carried + k]) continue;
        const onyx_type *hint = &body->values[body->outputs[1 + n_carried + k]].type;
        st = stack(ctx, n_carried + k, r.scans[k], r.n_iters, 0, false, hint);
    }
    loop_run_free(&r);
    onyx_value_destroy(iter_v);
    onyx_value_destroy(cond_v);
    for (size_t i = 0; out && i < body->n_outputs; i++) onyx_value_destroy(out[i]);
    free(prov);
    free(in);
    free(out);
    return st;
}

/* ---------------------------------------------------------------- Scan */

static onyx_status *scan_init(const onyx_kernel_info *info, void **state) {
    return cf_init_named(info, state, "body", NULL);
}

static onyx_status *axis_attr(const onyx_node *n, const char *name, size_t i, int64_t def, int64_t *out) {
    size_t count;
    const int64_t *v = onyx_attr_ints(n, name, &count);
    if (!v) {
        *out = def;
        return NULL;
    }
    if (i >= count) return ONYX_INVALID_MODEL("attribute '%s' has %zu entries, need at least %zu", name, count, i + 1);
    *out = v[i];
    return NULL;
}

/* Scan-9+ over one batch: in/out arrays already split into states and scans. */
static onyx_status *scan_run(onyx_kernel_ctx *ctx, const cf_state *s, size_t n_state, size_t n_scan_in,
                             const onyx_value *const *states, const onyx_value *const *scan_in,
                             const char *dir_attr, onyx_value **final_states, onyx_value ***scan_out,
                             size_t n_scan_out, int64_t *seq_len_out) {
    const onyx_node *n = ctx->node;
    const onyx_graph *body = onyx_subgraph_graph(s->sub[0]);
    int64_t seq_len = -1;
    int axes[64];
    bool rev[64];
    if (n_scan_in > 64) return ONYX_NOT_IMPLEMENTED("Scan with more than 64 scan inputs");
    for (size_t j = 0; j < n_scan_in; j++) {
        int64_t a, d;
        ONYX_TRY(axis_attr(n, "scan_input_axes", j, 0, &a));
        ONYX_TRY(axis_attr(n, dir_attr, j, 0, &d));
        if (!onyx_is_tensor(scan_in[j]) || scan_in[j]->rank < 1)
            return ONYX_INVALID_ARG("Scan: scan input %zu must be a tensor of rank >= 1", j);
        int ax;
        ONYX_TRY(onyx_normalize_axis(a, scan_in[j]->rank, &ax));
        axes[j] = ax;
        rev[j] = d != 0;
        int64_t len = scan_in[j]->dims[ax];
        if (seq_len >= 0 && len != seq_len)
            return ONYX_INVALID_ARG("Scan: scan inputs have different lengths (%lld vs %lld)", (long long)seq_len, (long long)len);
        seq_len = len;
    }
    if (seq_len < 0) seq_len = 0;
    *seq_len_out = seq_len;
    const onyx_value **in = calloc(n_state + n_scan_in + 1, sizeof *in);
    onyx_value **out = calloc(body->n_outputs + 1, sizeof *out);
    onyx_value **slices = calloc(n_scan_in + 1, sizeof *slices);
    onyx_status *st = NULL;
    if (!in || !out || !slices) st = ONYX_OOM();
    for (size_t i = 0; !st && i < n_state; i++) final_states[i] = NULL;
    for (int64_t t = 0; !st && t < seq_len; t++) {
        for (size_t i = 0; i < n_state; i++) in[i] = final_states[i] ? final_states[i] : states[i];
        for (size_t j = 0; !st && j < n_scan_in; j++) {
            onyx_value_destroy(slices[j]);
            slices[j] = NULL;
            st = slice_axis(scan_in[j], axes[j], rev[j] ? seq_len - 1 - t : t, &slices[j]);
            in[n_state + j] = slices[j];
        }
        if (!st) st = onyx_subgraph_run(s->sub[0], ctx, in, n_state + n_scan_in, out);
        if (st) break;
        for (size_t i = 0; i < n_state; i++) {
            onyx_value_destroy(final_states[i]);
            final_states[i] = out[i];
            out[i] = NULL;
        }
        for (size_t k = 0; k < n_scan_out; k++) {
            scan_out[k][t] = out[n_state + k];
            out[n_state + k] = NULL;
        }
    }
    for (size_t i = 0; !st && i < n_state; i++)
        if (!final_states[i]) st = onyx_value_clone(states[i], &final_states[i]);
    for (size_t j = 0; slices && j < n_scan_in; j++) onyx_value_destroy(slices[j]);
    free(slices);
    free(in);
    free(out);
    return st;
}

/* Scan-8: every state and scan input has a leading batch axis; the scan
 * axis is 1. Each batch entry is scanned on its own, then restacked. */
static onyx_status *scan8_compute(onyx_kernel_ctx *ctx) {
    const cf_state *s = ctx->state;
    const onyx_graph *body = onyx_subgraph_graph(s->sub[0]);
    int64_t m = onyx_attr_int(ctx->node, "num_scan_inputs", -1);
    if (ctx->n_in < 1 || m < 0 || (size_t)m > ctx->n_in - 1) return ONYX_INVALID_MODEL("Scan-8: bad num_scan_inputs");
    size_t n_state = ctx->n_in - 1 - (size_t)m, n_scan_in = (size_t)m;
    if (body->n_inputs != n_state + n_scan_in || body->n_outputs < n_state || ctx->n_out != body->n_outputs)
        return ONYX_INVALID_MODEL("Scan-8: body inputs/outputs do not match the node");
    size_t n_scan_out = body->n_outputs - n_state, n_all = ctx->n_in - 1;
    const onyx_value *const *all = ctx->in + 1;
    int64_t batch = -1, max_len = 0;
    for (size_t i = 0; i < n_all; i++) {
        if (!onyx_is_tensor(all[i]) || all[i]->rank < 1) return ONYX_INVALID_ARG("Scan-8: input %zu needs a batch axis", i + 1);
        if (batch >= 0 && all[i]->dims[0] != batch) return ONYX_INVALID_ARG("Scan-8: inputs disagree on the batch size");
        batch = all[i]->dims[0];
        for (int d = 0; d < all[i]->rank; d++) if (all[i]->dims[d] > max_len) max_len = all[i]->dims[d];
    }
    if (ctx->in[0]) {
        const onyx_value *sl = ctx->in[0];
        int64_t *lens, cnt;
        ONYX_TRY(onyx_read_int_tensor(sl, &lens, &cnt));
        bool full = true;
        for (int64_t b = 0; b < cnt; b++)
            for (size_t j = 0; j < n_scan_in; j++) full &= lens[b] == all[n_state + j]->dims[1];
        free(lens);
        if (!full) return ONYX_NOT_IMPLEMENTED("Scan-8 with sequence_lens shorter than the scan axis");
    }
    if (batch < 0) batch = 0;
    onyx_value **slices = calloc(n_all + 1, sizeof *slices);
    onyx_value ***per_batch = calloc(body->n_outputs + 1, sizeof *per_batch); /* [output][batch] */
    onyx_value **finals = calloc(n_state + 1, sizeof *finals);
    onyx_value ***scans = calloc(n_scan_out + 1, sizeof *scans);
    onyx_status *st = NULL;
    if (!slices || !per_batch || !finals || !scans) st = ONYX_OOM();
    for (size_t k = 0; !st && k < body->n_outputs; k++)
        if (!(per_batch[k] = calloc((size_t)batch + 1, sizeof **per_batch))) st = ONYX_OOM();
    for (size_t k = 0; !st && k < n_scan_out; k++)
        if (!(scans[k] = calloc((size_t)max_len + 1, sizeof **scans))) st = ONYX_OOM();
    for (int64_t b = 0; !st && b < batch; b++) {
        for (size_t i = 0; !st && i < n_all; i++) {
            onyx_value_destroy(slices[i]);
            slices[i] = NULL;
            st = slice_axis(all[i], 0, b, &slices[i]);
        }
        int64_t len = 0;
        if (!st)
            st = scan_run(ctx, s, n_state, n_scan_in, (const onyx_value *const *)slices,
                          (const onyx_value *const *)slices + n_state, "directions", finals, scans, n_scan_out, &len);
        for (size_t i = 0; !st && i < n_state; i++) {
            per_batch[i][b] = finals[i];
            finals[i] = NULL;
        }
        for (size_t k = 0; !st && k < n_scan_out; k++) {
            const onyx_type *hint = &body->values[body->outputs[n_state + k]].type;
            st = build_stack(scans[k], (size_t)len, 0, false, hint, &per_batch[n_state + k][b]);
        }
        for (size_t k = 0; k < n_scan_out; k++)
            for (int64_t t = 0; t < len; t++) {
                onyx_value_destroy(scans[k][t]);
                scans[k][t] = NULL;
            }
    }
    for (size_t k = 0; !st && k < body->n_outputs; k++)
        if (ctx->out_used[k]) st = stack(ctx, k, per_batch[k], (size_t)batch, 0, false, NULL);
    for (size_t i = 0; slices && i < n_all; i++) onyx_value_destroy(slices[i]);
    for (size_t k = 0; per_batch && k < body->n_outputs; k++) {
        for (int64_t b = 0; per_batch[k] && b < batch; b++) onyx_value_destroy(per_batch[k][b]);
        free(per_batch[k]);
    }
    for (size_t i = 0; finals && i < n_state; i++) onyx_value_destroy(finals[i]);
    for (size_t k = 0; scans && k < n_scan_out; k++) free(scans[k]);
    free(slices);
    free(per_batch);
    free(finals);
    free(scans);
    return st;
}

static onyx_status *scan_compute(onyx_kernel_ctx *ctx) {
    const cf_state *s = ctx->state;
    const onyx_node *n = ctx->node;
    const onyx_graph *body = onyx_subgraph_graph(s->sub[0]);
    if (ctx->opset < 9) return scan8_compute(ctx);
    int64_t m = onyx_attr_int(n, "num_scan_inputs", -1);
    if (m < 0 || (size_t)m > ctx->n_in) return ONYX_INVALID_MODEL("Scan: bad num_scan_inputs %lld", (long long)m);
    size_t n_state = ctx->n_in - (size_t)m, n_scan_in = (size_t)m;
    if (body->n_inputs != ctx->n_in || body->n_outputs < n_state)
        return ONYX_INVALID_MODEL("Scan: body inputs/outputs do not match the node");
    size_t n_scan_out = body->n_outputs - n_state;
    if (ctx->n_out != n_state + n_scan_out) return ONYX_INVALID_MODEL("Scan: node output count mismatch");
    /* the sequence length bounds the per-iteration arrays: size them after
     * a first look at the scan inputs */
    int64_t max_len = 0;
    for (size_t j = 0; j < n_scan_in; j++)
        if (onyx_is_tensor(ctx->in[n_state + j]))
            for (int d = 0; d < ctx->in[n_state + j]->rank; d++)
                if (ctx->in[n_state + j]->dims[d] > max_len) max_len = ctx->in[n_state + j]->dims[d];
    onyx_value **finals = calloc(n_state + 1, sizeof *finals);
    onyx_value ***scans = calloc(n_scan_out + 1, sizeof *scans);
    onyx_status *st = NULL;
    if (!finals || !scans) st = ONYX_OOM();
    for (size_t k = 0; !st && k < n_scan_out; k++)
        if (!(scans[k] = calloc((size_t)max_len + 1, sizeof **scans))) st = ONYX_OOM();
    int64_t len = 0;
    if (!st)
        st = scan_run(ctx, s, n_state, n_scan_in, ctx->in, ctx->in + n_state, "scan_input_directions", finals,
                      scans, n_scan_out, &len);
    for (size_t i = 0; !st && i < n_state; i++) {
        if (ctx->out_used[i]) {
            st = onyx_kernel_set_output(ctx, i, finals[i]);
            finals[i] = NULL;
        }
    }
    for (size_t k = 0; !st && k < n_scan_out; k++) {
        if (!ctx->out_used[n_state + k]) continue;
        int64_t a, d;
        st = axis_attr(n, "scan_output_axes", k, 0, &a);
        if (!st) st = axis_attr(n, "scan_output_directions", k, 0, &d);
        if (st) break;
        int rank = len > 0 && scans[k][0] ? scans[k][0]->rank : 0;
        int ax;
        st = onyx_normalize_axis(a, rank + 1, &ax);
        const onyx_type *hint = &body->values[body->outputs[n_state + k]].type;
        if (!st) st = stack(ctx, n_state + k, scans[k], (size_t)len, ax, d != 0, hint);
    }
    for (size_t i = 0; finals && i < n_state; i++) onyx_value_destroy(finals[i]);
    for (size_t k = 0; scans && k < n_scan_out; k++) {
        for (int64_t t = 0; scans[k] && t < len; t++) onyx_value_destroy(scans[k][t]);
        free(scans[k]);
    }
    free(finals);
    free(scans);
    return st;
}

/* ---------------------------------------------------------- SequenceMap */

static onyx_status *seqmap_compute(onyx_kernel_ctx *ctx) {
    const cf_state *s = ctx->state;
    const onyx_graph *body = onyx_subgraph_graph(s->sub[0]);
    const onyx_value *seq = ctx->in[0];
    if (!seq || seq->kind != ONYX_VALUE_SEQUENCE) return ONYX_INVALID_ARG("SequenceMap: input 0 must be a sequence");
    if (body->n_inputs != ctx->n_in || body->n_outputs != ctx->n_out)
        return ONYX_INVALID_MODEL("SequenceMap: body has %zu inputs/%zu outputs, node has %zu/%zu", body->n_inputs,
                                  body->n_outputs, ctx->n_in, ctx->n_out);
    size_t len = seq->n_items;
    for (size_t j = 1; j < ctx->n_in; j++)
        if (ctx->in[j] && ctx->in[j]->kind == ONYX_VALUE_SEQUENCE && ctx->in[j]->n_items != len)
            return ONYX_INVALID_ARG("SequenceMap: sequence input %zu has %zu elements, input 0 has %zu", j,
                                    ctx->in[j]->n_items, len);
    const onyx_value **in = calloc(ctx->n_in + 1, sizeof *in);
    onyx_value **out = calloc(ctx->n_out + 1, sizeof *out);
    onyx_value **results = calloc(ctx->n_out + 1, sizeof *results);
    onyx_status *st = NULL;
    if (!in || !out || !results) st = ONYX_OOM();
    for (size_t k = 0; !st && k < ctx->n_out; k++) {
        results[k] = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
        if (!results[k]) st = ONYX_OOM();
        else results[k]->dtype = body->values[body->outputs[k]].type.dtype;
    }
    for (size_t i = 0; !st && i < len; i++) {
        for (size_t j = 0; j < ctx->n_in; j++) {
            const onyx_value *v = ctx->in[j];
            in[j] = v && v->kind == ONYX_VALUE_SEQUENCE ? v->items[i] : v;
        }
        st = onyx_subgraph_run(s->sub[0], ctx, in, ctx->n_in, out);
        for (size_t k = 0; !st && k < ctx->n_out; k++) {
            results[k]->dtype = out[k]->dtype;
            st = onyx_sequence_append(results[k], out[k]);
            out[k] = NULL;
        }
        for (size_t k = 0; k < ctx->n_out; k++) {
            onyx_value_destroy(out[k]);
            out[k] = NULL;
        }
    }
    if (!st) st = emit(ctx, results, ctx->n_out);
    for (size_t k = 0; results && k < ctx->n_out; k++) onyx_value_destroy(results[k]);
    free(in);
    free(out);
    free(results);
    return st;
}

const onyx_op_def onyx_ops_controlflow[] = {
    {"", "SequenceMap", 17, ONYX_OPSET_LATEST, 0, 0, loop_init, cf_free, seqmap_compute},
    {"", "If", 1, ONYX_OPSET_LATEST, 0, 0, if_init, cf_free, if_compute},
    {"", "Loop", 1, ONYX_OPSET_LATEST, 0, 0, loop_init, cf_free, loop_compute},
    {"", "Scan", 8, ONYX_OPSET_LATEST, 0, 0, scan_init, cf_free, scan_compute},
    {0},};
