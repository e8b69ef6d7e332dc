/* Operator input/output counts and newest opsets (see op_arity.h). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ir/op_arity.h"

#include "ir/op_arity_table.h"

#define N_ARITY (sizeof op_arity_table / sizeof op_arity_table[0])

static const char *canonical(const char *domain) {
    return !domain || !strcmp(domain, "ai.onnx") ? "" : domain;
}

static int cmp_key(const onyx_op_arity *e, const char *domain, const char *op) {
    int c = strcmp(e->domain, domain);
    return c ? c : strcmp(e->op_type, op);
}

/* The answers for a few (op, opset) pairs, per thread, by the op_type's
 * address (a graph shares one string per operator): the graph build asks
 * for every node, and a binary search is about ten string comparisons. An
 * answer is checked by content (the table's strings are static), never
 * trusted by pointer. */
enum { ARITY_MEMO_SLOTS = 8 };
static _Thread_local struct { const onyx_op_arity *entry; int opset; } arity_memo[ARITY_MEMO_SLOTS];

static const onyx_op_arity *search(const char *domain, const char *op_type, int opset);

const onyx_op_arity *onyx_op_arity_find(const char *domain, const char *op_type, int opset) {
    domain = canonical(domain);
    size_t slot = ((uintptr_t)op_type >> 4) % ARITY_MEMO_SLOTS;
    const onyx_op_arity *e = arity_memo[slot].entry;
    if (e && arity_memo[slot].opset == opset && !cmp_key(e, domain, op_type)) return e;
    e = search(domain, op_type, opset);
    if (e) {
        arity_memo[slot].entry = e;
        arity_memo[slot].opset = opset;
    }
    return e;
}

static const onyx_op_arity *search(const char *domain, const char *op_type, int opset) {
    size_t lo = 0, hi = N_ARITY;
    while (lo < hi) { /* first entry >= (domain, op) */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&op_arity_table[mid], domain, op_type) < 0) lo = mid + 1;
        else hi = mid;
    }
    const onyx_op_arity *found = NULL;
    for (size_t i = lo; i < N_ARITY && !cmp_key(&op_arity_table[i], domain, op_type); i++)
        if (op_arity_table[i].since_version <= opset) found = &op_arity_table[i];
    return found;
}

int onyx_newest_opset(const char *domain) {
    domain = canonical(domain);
    for (size_t i = 0; i < sizeof newest_opsets / sizeof newest_opsets[0]; i++)
        if (!strcmp(newest_opsets[i].domain, domain)) return newest_opsets[i].opset;
    return 0;
}

onyx_status *onyx_check_model_opsets(const onyx_model *m) {
    for (size_t i = 0; i < m->n_opsets; i++) {
        const char *d = canonical(m->opsets[i].domain);
        int newest = onyx_newest_opset(d);
        if (newest && m->opsets[i].version > newest)
            return ONYX_INVALID_MODEL("the model imports opset %lld of domain '%s'; the newest this runtime "
                                      "knows is %d", (long long)m->opsets[i].version, d[0] ? d : "ai.onnx", newest);
    }
    return NULL;
}

/* count without trailing omitted (-1) entries */
static size_t given(const int32_t *ids, size_t n) {
    while (n && ids[n - 1] < 0) n--;
    return n;
}

static onyx_status *check_count(const onyx_node *n, const char *what, size_t positions, size_t count, int lo,
                                int hi) {
    if ((long long)positions >= lo && (hi == INT_MAX || (long long)count <= hi)) return NULL;
    char d[300], range[48];
    if (hi == INT_MAX) snprintf(range, sizeof range, "at least %d", lo);
    else if (lo == hi) snprintf(range, sizeof range, "exactly %d", lo);
    else snprintf(range, sizeof range, "%d to %d", lo, hi);
    return ONYX_INVALID_MODEL("%s has %zu %s; the operator takes %s", onyx_node_describe(n, d, sizeof d),
                              (long long)positions < lo ? positions : count, what, range);
}

onyx_status *onyx_check_node_arity(const onyx_node *n) {
    const onyx_op_arity *a = onyx_op_arity_find(n->domain, n->op_type, n->opset);
    if (!a) return NULL;
    ONYX_TRY(check_count(n, "inputs", n->n_in, given(n->in, n->n_in), a->min_in, a->max_in));
    return check_count(n, "outputs", n->n_out, given(n->out, n->n_out), a->min_out, a->max_out);
}
