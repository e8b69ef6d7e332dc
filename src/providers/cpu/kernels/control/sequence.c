/* Sequences and optionals: SequenceEmpty/Construct/Insert/At/Erase/Length,
 * SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement,
 * OptionalGetElement. Values are immutable in the executor, so operators
 * that "modify" a sequence build a new one from copies. */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"

static onyx_status *new_sequence(int dtype, onyx_value **out) {
    onyx_value *s = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
    if (!s) return ONYX_OOM();
    s->dtype = (uint8_t)dtype;
    *out = s;
    return NULL;
}

static onyx_status *append_copy(onyx_value *seq, const onyx_value *item) {
    onyx_value *c;
    ONYX_TRY(onyx_value_clone(item, &c));
    return onyx_sequence_append(seq, c);
}

static onyx_status *require_sequence(const onyx_value *v, const char *what) {
    if (!v || v->kind != ONYX_VALUE_SEQUENCE) return ONYX_INVALID_ARG("%s must be a sequence", what);
    return NULL;
}

/* A position input: int32/int64 scalar in [-n, n_max]; returns it normalised. */
static onyx_status *read_position(const onyx_value *p, int64_t n, int64_t n_max, int64_t *out) {
    if (!onyx_is_tensor(p) || p->numel != 1 || (p->dtype != ONYX_INT32 && p->dtype != ONYX_INT64))
        return ONYX_INVALID_ARG("position must be an int32 or int64 scalar");
    int64_t v = p->dtype == ONYX_INT64 ? ((const int64_t *)p->data)[0] : ((const int32_t *)p->data)[0];
    if (v < -n || v > n_max)
        return ONYX_INVALID_ARG("position %lld is out of range [%lld, %lld]", (long long)v, (long long)-n, (long long)n_max);
    *out = v < 0 ? v + n : v;
    return NULL;
}

static onyx_status *seq_empty(onyx_kernel_ctx *ctx) {
    int64_t dt = onyx_attr_int(ctx->node, "dtype", ONYX_FLOAT);
    if (!onyx_dtype_valid((int)dt)) return ONYX_INVALID_ARG("SequenceEmpty: invalid dtype %lld", (long long)dt);
    onyx_value *s = NULL;
    ONYX_TRY(new_sequence((int)dt, &s));
    return onyx_kernel_set_output(ctx, 0, s);
}

static onyx_status *seq_construct(onyx_kernel_ctx *ctx) {
    if (ctx->n_in == 0 || !onyx_is_tensor(ctx->in[0])) return ONYX_INVALID_ARG("SequenceConstruct needs tensor inputs");
    onyx_value *s = NULL;
    ONYX_TRY(new_sequence(ctx->in[0]->dtype, &s));
    for (size_t i = 0; i < ctx->n_in; i++) {
        onyx_status *st = NULL;
        if (!onyx_is_tensor(ctx->in[i]) || ctx->in[i]->dtype != s->dtype)
            st = ONYX_INVALID_ARG("SequenceConstruct: input %zu is not a %s tensor", i, onyx_dtype_name(s->dtype));
        if (!st) st = append_copy(s, ctx->in[i]);
        if (st) {
            onyx_value_destroy(s);
            return st;
        }
    }
    return onyx_kernel_set_output(ctx, 0, s);
}

static onyx_status *seq_insert(onyx_kernel_ctx *ctx) {
    const onyx_value *seq = ctx->in[0], *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
    ONYX_TRY(require_sequence(seq, "SequenceInsert input 0"));
    if (!onyx_is_tensor(t)) return ONYX_INVALID_ARG("SequenceInsert: input 1 must be a tensor");
    if (seq->n_items && t->dtype != seq->dtype)
        return ONYX_INVALID_ARG("SequenceInsert: tensor type %s differs from the sequence's %s",
                                onyx_dtype_name(t->dtype), onyx_dtype_name(seq->dtype));
    int64_t n = (int64_t)seq->n_items, pos = n;
    if (ctx->n_in > 2 && ctx->in[2]) ONYX_TRY(read_position(ctx->in[2], n, n, &pos));
    onyx_value *s = NULL;
    ONYX_TRY(new_sequence(t->dtype, &s));
    onyx_status *st = NULL;
    for (int64_t i = 0; !st && i <= n; i++) {
        if (i == pos) st = append_copy(s, t);
        if (!st && i < n) st = append_copy(s, seq->items[i]);
    }
    if (st) {
        onyx_value_destroy(s);
        return st;
    }
    return onyx_kernel_set_output(ctx, 0, s);
}

static onyx_status *seq_at(onyx_kernel_ctx *ctx) {
    const onyx_value *seq = ctx->in[0];
    ONYX_TRY(require_sequence(seq, "SequenceAt input 0"));
    int64_t n = (int64_t)seq->n_items, pos;
    if (n == 0) return ONYX_INVALID_ARG("SequenceAt: the sequence is empty");
    ONYX_TRY(read_position(ctx->n_in > 1 ? ctx->in[1] : NULL, n, n - 1, &pos));
    onyx_value *c;
    ONYX_TRY(onyx_value_clone(seq->items[pos], &c));
    return onyx_kernel_set_output(ctx, 0, c);
}

static onyx_status *seq_erase(onyx_kernel_ctx *ctx) {
    const onyx_value *seq = ctx->in[0];
    ONYX_TRY(require_sequence(seq, "SequenceErase input 0"));
    int64_t n = (int64_t)seq->n_items, pos = n - 1;
    if (n == 0) return ONYX_INVALID_ARG("SequenceErase: the sequence is empty");
    if (ctx->n_in > 1 && ctx->in[1]) ONYX_TRY(read_position(ctx->in[1], n, n - 1, &pos));
    onyx_value *s = NULL;
    ONYX_TRY(new_sequence(seq->dtype, &s));
    for (int64_t i = 0; i < n; i++) {
        if (i == pos) continue;
        onyx_status *st = append_copy(s, seq->items[i]);
        if (st) {
            onyx_value_destroy(s);
            return st;
        }
    }
    return onyx_kernel_set_output(ctx, 0, s);
}

static onyx_status *seq_length(onyx_kernel_ctx *ctx) {
    ONYX_TRY(require_sequence(ctx->in[0], "SequenceLength input"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT64, 0, NULL, &y));
    ((int64_t *)y->data)[0] = (int64_t)ctx->in[0]->n_items;
    return NULL;
}

/* Copy x[..., start:start+len, ...] along axis into a new tensor. */
static onyx_status *slice_range(const onyx_value *x, int axis, int64_t start, int64_t len, bool keep,
                                onyx_value **out) {
    int64_t dims[ONYX_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d == axis && !keep) continue;
        dims[rank++] = d == axis ? len : x->dims[d];
    }
    size_t esize = x->dtype == ONYX_STRING ? sizeof(onyx_string) : onyx_dtype(x->dtype)->bits / 8;
    if (!esize) return ONYX_NOT_IMPLEMENTED("sub-byte element types in sequences");
    onyx_value *y;
    ONYX_TRY(onyx_tensor_new(x->dtype, rank, dims, &y));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    for (int64_t o = 0; o < outer; o++) {
        size_t src = (size_t)((o * x->dims[axis] + start) * inner), dst = (size_t)(o * len * inner);
        if (x->dtype == ONYX_STRING) {
            const onyx_string *s = x->data;
            onyx_string *t = y->data;
            for (int64_t k = 0; k < len * inner; k++) {
                const onyx_string *a = &s[src + k];
                t[dst + k].data = malloc(a->len + 1);
                if (!t[dst + k].data) {
                    onyx_value_destroy(y);
                    return ONYX_OOM();
                }
                memcpy(t[dst + k].data, a->data ? a->data : "", a->len);
                t[dst + k].data[a->len] = 0;
                t[dst + k].len = a->len;
            }
        } else {
            memcpy((uint8_t *)y->data + dst * esize, (const uint8_t *)x->data + src * esize,
                   (size_t)(len * inner) * esize);
        }
    }
    *out = y;
    return NULL;
}

static onyx_status *split_to_sequence(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->in[0];
    if (!onyx_is_tensor(x) || x->rank < 1) return ONYX_INVALID_ARG("SplitToSequence: input must be a tensor of rank >= 1");
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), x->rank, &axis));
    int64_t dim = x->dims[axis];
    int64_t *sizes = NULL, n = 0;
    bool keep = true;
    const onyx_value *split = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!split) {
        keep = onyx_attr_int(ctx->node, "keepdims", 1) != 0;
        n = dim;
        sizes = malloc(((size_t)n + 1) * sizeof *sizes);
        if (!sizes) return ONYX_OOM();
        for (int64_t i = 0; i < n; i++) sizes[i] = 1;
    } else {
        int64_t cnt;
        ONYX_TRY(onyx_read_int_tensor(split, &sizes, &cnt));
        if (split->rank == 0) {
            int64_t chunk = sizes[0];
            free(sizes);
            if (chunk <= 0) return ONYX_INVALID_ARG("SplitToSequence: split must be positive, got %lld", (long long)chunk);
            n = (dim + chunk - 1) / chunk;
            sizes = malloc(((size_t)n + 1) * sizeof *sizes);
            if (!sizes) return ONYX_OOM();
            for (int64_t i = 0; i < n; i++) sizes[i] = i == n - 1 ? dim - chunk * (n - 1) : chunk;
        } else {
            n = cnt;
            int64_t sum = 0;
            for (int64_t i = 0; i < n; i++) {
                if (sizes[i] < 0) {
                    free(sizes);
                    return ONYX_INVALID_ARG("SplitToSequence: split[%lld] is negative", (long long)i);
                }
                sum += sizes[i];
            }
            if (sum != dim) {
                free(sizes);
                return ONYX_INVALID_ARG("SplitToSequence: split sums to %lld but axis %d has %lld", (long long)sum, axis, (long long)dim);
            }
        }
    }
    onyx_value *s = NULL;
    onyx_status *st = new_sequence(x->dtype, &s);
    for (int64_t i = 0, at = 0; !st && i < n; at += sizes[i], i++) {
        onyx_value *part = NULL;
        st = slice_range(x, axis, at, sizes[i], keep || split, &part);
        if (!st) st = onyx_sequence_append(s, part);
    }
    free(sizes);
    if (st) {
        if (s) onyx_value_destroy(s);
        return st;
    }
    return onyx_kernel_set_output(ctx, 0, s);
}

static onyx_status *concat_from_sequence(onyx_kernel_ctx *ctx) {
    const onyx_value *seq = ctx->in[0];
    ONYX_TRY(require_sequence(seq, "ConcatFromSequence input"));
    if (!seq->n_items) return ONYX_INVALID_ARG("ConcatFromSequence: the sequence is empty");
    bool new_axis = onyx_attr_int(ctx->node, "new_axis", 0) != 0;
    const onyx_value *first = seq->items[0];
    int out_rank = first->rank + (new_axis ? 1 : 0);
    if (out_rank > ONYX_MAX_RANK || out_rank < 1) return ONYX_INVALID_ARG("ConcatFromSequence: bad rank");
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), out_rank, &axis));
    size_t esize = first->dtype == ONYX_STRING ? 0 : onyx_dtype(first->dtype)->bits / 8;
    if (!esize) return ONYX_NOT_IMPLEMENTED("ConcatFromSequence for %s", onyx_dtype_name(first->dtype));
    int64_t dims[ONYX_MAX_RANK], total = 0;
    for (size_t k = 0; k < seq->n_items; k++) {
        const onyx_value *t = seq->items[k];
        if (t->dtype != first->dtype || t->rank != first->rank)
            return ONYX_INVALID_ARG("ConcatFromSequence: element %zu has a different type or rank", k);
        for (int d = 0; d < t->rank; d++) {
            int od = new_axis && d >= axis ? d + 1 : d;
            if (od != axis && t->dims[d] != first->dims[d])
                return ONYX_INVALID_ARG("ConcatFromSequence: element %zu differs in dimension %d", k, d);
        }
        total += new_axis ? 1 : t->dims[axis];
    }
    /* the element shape with the axis grown to total (or inserted) */
    for (int d = 0, j = 0; d < out_rank; d++) {
        if (d == axis) {
            dims[d] = total;
            if (!new_axis) j++;
        } else {
            dims[d] = first->dims[j++];
        }
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, first->dtype, out_rank, dims, &y));
    int64_t outer = 1;
    for (int d = 0; d < axis; d++) outer *= dims[d];
    size_t row = 0; /* bytes of one outer row of the output */
    for (size_t k = 0; k < seq->n_items; k++) row += seq->items[k]->nbytes / (size_t)(outer ? outer : 1);
    size_t off = 0;
    for (size_t k = 0; k < seq->n_items; k++) {
        const onyx_value *t = seq->items[k];
        size_t part = outer ? t->nbytes / (size_t)outer : 0;
        for (int64_t o = 0; o < outer; o++)
            memcpy((uint8_t *)y->data + (size_t)o * row + off, (const uint8_t *)t->data + (size_t)o * part, part);
        off += part;
    }
    return NULL;
}

static onyx_status *optional_make(onyx_kernel_ctx *ctx) {
    onyx_value *o = onyx_value_new_empty(ONYX_VALUE_OPTIONAL);
    if (!o) return ONYX_OOM();
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    o->has_value = x != NULL;
    if (x) {
        onyx_value *c;
        onyx_status *st = onyx_value_clone(x, &c);
        if (!st) st = onyx_sequence_append(o, c);
        if (st) {
            onyx_value_destroy(o);
            return st;
        }
        o->dtype = x->dtype;
    }
    return onyx_kernel_set_output(ctx, 0, o);
}

static onyx_status *optional_has(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    bool has = x && (x->kind != ONYX_VALUE_OPTIONAL || (x->has_value && x->n_items));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_BOOL, 0, NULL, &y));
    ((uint8_t *)y->data)[0] = has;
    return NULL;
}

static onyx_status *optional_get(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->in[0];
    if (!x) return ONYX_INVALID_ARG("OptionalGetElement: no input");
    const onyx_value *v = x;
    if (x->kind == ONYX_VALUE_OPTIONAL) {
        if (!x->has_value || !x->n_items) return ONYX_INVALID_ARG("OptionalGetElement: the optional is empty");
        v = x->items[0];
    }
    onyx_value *c;
    ONYX_TRY(onyx_value_clone(v, &c));
    return onyx_kernel_set_output(ctx, 0, c);
}

const onyx_op_def onyx_ops_sequence[] = {
    {"", "SequenceEmpty", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, seq_empty},
    {"", "SequenceConstruct", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, seq_construct},
    {"", "SequenceInsert", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, seq_insert},
    {"", "SequenceAt", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, seq_at},
    {"", "SequenceErase", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, seq_erase},
    {"", "SequenceLength", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, seq_length},
    {"", "SplitToSequence", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, split_to_sequence},
    {"", "ConcatFromSequence", 11, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, concat_from_sequence},
    {"", "Optional", 15, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, optional_make},
    {"", "OptionalHasElement", 15, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, optional_has},
    {"", "OptionalGetElement", 15, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, optional_get},
    {0},};
