/* A minimal onyx execution provider, built apart from onyx against
 * include/onyx_provider.h alone:
 *
 *   cc -shared -fPIC -O2 -I include examples/provider/example_provider.c \
 *      -o libonyx_provider_example.so
 *
 * It runs float Add, Sub, Mul and Relu (with numpy broadcasting) on a pretend
 * device whose memory is kept apart from the host's: the pointers it hands
 * out are scrambled, so the host dereferencing one crashes at once instead
 * of silently reading the right bytes. That makes it the partitioner's test
 * provider: every value has to cross the boundary through its copy
 * functions.
 *
 * Options: mode = nodes (one kernel per node, the default) | groups
 * (connected claimed nodes are compiled into one kernel: GetCapability and
 * Compile); fail = 1 (pretend the device is missing). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx_provider.h"

#ifndef EXAMPLE_API_VERSION
#define EXAMPLE_API_VERSION ONYX_PROVIDER_API_VERSION
#endif
/* the table's size: a build with EXAMPLE_TABLE_2_0 says it is an interface
 * 2.0 table (no begin_run/end_run), as a provider built before 2.1 would */
#ifdef EXAMPLE_TABLE_2_0
#define EXAMPLE_TABLE_SIZE ONYX_EP_PLUGIN_SIZE_2_0
#else
#define EXAMPLE_TABLE_SIZE sizeof(onyx_ep_plugin)
#endif

/* host address <-> "device" handle: a non-canonical address on x86-64 and
 * AArch64, so the host cannot read through it by mistake */
#define SCRAMBLE UINT64_C(0x5a00000000000000)
static void *to_handle(void *p) { return p ? (void *)((uintptr_t)p ^ SCRAMBLE) : NULL; }
static void *to_host(const void *h) { return h ? (void *)((uintptr_t)h ^ SCRAMBLE) : NULL; }

typedef struct provider {
    const onyx_host_api *host;
    int groups;
} provider;

enum op { OP_ADD, OP_SUB, OP_MUL, OP_RELU, OP_NONE };

static enum op op_of(const onyx_host_api *h, const onyx_ep_node *n) {
    if (h->node_domain(n)[0]) return OP_NONE;
    const char *t = h->node_op_type(n);
    return !strcmp(t, "Add") ? OP_ADD : !strcmp(t, "Sub") ? OP_SUB : !strcmp(t, "Mul") ? OP_MUL
         : !strcmp(t, "Relu") ? OP_RELU : OP_NONE;
}

static onyx_status *create(const onyx_host_api *host, const char *const *keys, const char *const *values,
                           size_t n, void **out) {
    provider *p = calloc(1, sizeof *p);
    if (!p) return host->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    p->host = host;
    for (size_t i = 0; i < n; i++) {
        onyx_status *st = NULL;
        if (!strcmp(keys[i], "mode")) {
            if (!strcmp(values[i], "groups")) p->groups = 1;
            else if (strcmp(values[i], "nodes"))
                st = host->error(ONYX_ERR_INVALID_ARGUMENT, "example provider: option mode must be nodes or groups, got '%s'", values[i]);
        } else if (!strcmp(keys[i], "fail")) {
            if (!strcmp(values[i], "1"))
                st = host->error(ONYX_ERR_FAIL, "example device not present (option fail=1)");
        } else {
            st = host->error(ONYX_ERR_INVALID_ARGUMENT, "example provider: unknown option '%s' (known: mode, fail)", keys[i]);
        }
        if (st) {
            free(p);
            return st;
        }
    }
    *out = p;
    return NULL;
}

static void destroy(void *p) { free(p); }
static const char *device_name(void *p) { return "example:0 (scrambled host memory)"; }

/* What the device did since the library was loaded, for tests (read with
 * dlsym): allocations, and copies by onyx_ep_copy_kind (index 1..3). */
ONYX_EP_EXPORT unsigned long onyx_example_allocs;
ONYX_EP_EXPORT unsigned long onyx_example_copies[4];

static void *dev_alloc(void *p, size_t n) {
    __atomic_fetch_add(&onyx_example_allocs, 1, __ATOMIC_RELAXED);
    return to_handle(malloc(n ? n : 1));
}
static void dev_free(void *p, void *ptr) { free(to_host(ptr)); }

static onyx_status *dev_copy(void *p, void *dst, const void *src, size_t n, onyx_ep_copy_kind kind) {
    if (kind >= 1 && kind <= 3) __atomic_fetch_add(&onyx_example_copies[kind], 1, __ATOMIC_RELAXED);
    void *d = kind == ONYX_EP_DEVICE_TO_HOST ? dst : to_host(dst);
    const void *s = kind == ONYX_EP_HOST_TO_DEVICE ? src : to_host(src);
    memcpy(d, s, n);
    return NULL;
}

static int claim(void *pv, const onyx_ep_node *n) {
    provider *p = pv;
    const onyx_host_api *h = p->host;
    if (op_of(h, n) == OP_NONE) return 0;
    for (size_t k = 0; k < h->node_input_count(n); k++) {
        int32_t dt, rank;
        int64_t dims[ONYX_EP_MAX_RANK];
        if (!h->node_input_type(n, k, &dt, &rank, dims) || dt != ONYX_FLOAT) return 0;
    }
    return 1;
}

/* groups mode: connected claimed nodes share a group (union-find) */
static int find(int32_t *parent, int32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

static onyx_status *get_capability(void *pv, const onyx_ep_graph *g, const uint8_t *available, int32_t *out) {
    provider *p = pv;
    const onyx_host_api *h = p->host;
    size_t n = h->graph_node_count(g);
    int32_t *parent = malloc((n + 1) * sizeof *parent);
    if (!parent) return h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    for (size_t i = 0; i < n; i++) {
        parent[i] = (int32_t)i;
        out[i] = available[i] && claim(p, h->graph_node(g, i)) ? ONYX_EP_SINGLE : ONYX_EP_UNCLAIMED;
    }
    for (size_t i = 0; i < n; i++) {
        if (out[i] == ONYX_EP_UNCLAIMED || !p->groups) continue;
        for (size_t k = 0; k < h->node_input_count(h->graph_node(g, i)); k++) {
            int64_t pr = h->graph_input_producer(g, i, k);
            if (pr >= 0 && out[pr] != ONYX_EP_UNCLAIMED) parent[find(parent, (int32_t)i)] = find(parent, (int32_t)pr);
        }
    }
    if (p->groups)
        for (size_t i = 0; i < n; i++)
            if (out[i] != ONYX_EP_UNCLAIMED) out[i] = find(parent, (int32_t)i) + 1;
    free(parent);
    return NULL;
}

/* ---- kernels: a list of steps over named values ---- */

typedef struct step {
    enum op op;
    int n_in;
    char *in[2], *out;
} step;

typedef struct kernel {
    size_t n_steps;
    step *steps;
    size_t n_in, n_out;
    char **in_names, **out_names;   /* compiled groups: ctx order */
} kernel;

static void free_kernel(void *pv, void *kv) {
    kernel *k = kv;
    if (!k) return;
    for (size_t i = 0; i < k->n_steps; i++) {
        free(k->steps[i].in[0]);
        free(k->steps[i].in[1]);
        free(k->steps[i].out);
    }
    for (size_t i = 0; i < k->n_in; i++) free(k->in_names[i]);
    for (size_t i = 0; i < k->n_out; i++) free(k->out_names[i]);
    free(k->in_names);
    free(k->out_names);
    free(k->steps);
    free(k);
}

static char *dup(const char *s) {
    char *d = malloc(strlen(s ? s : "") + 1);
    if (d) strcpy(d, s ? s : "");
    return d;
}

static onyx_status *add_step(provider *p, kernel *k, const onyx_ep_node *n) {
    const onyx_host_api *h = p->host;
    step *s = &k->steps[k->n_steps++];
    memset(s, 0, sizeof *s);
    s->op = op_of(h, n);
    s->n_in = s->op == OP_RELU ? 1 : 2;
    if ((int)h->node_input_count(n) != s->n_in || h->node_output_count(n) != 1)
        return h->error(ONYX_ERR_INVALID_MODEL, "example provider: %s takes %d inputs and 1 output",
                        h->node_op_type(n), s->n_in);
    for (int i = 0; i < s->n_in; i++)
        if (!(s->in[i] = dup(h->node_input_name(n, (size_t)i))))
            return h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    s->out = dup(h->node_output_name(n, 0));
    return s->out ? NULL : h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
}

static onyx_status *create_kernel(void *pv, const onyx_ep_node *n, void **out) {
    provider *p = pv;
    kernel *k = calloc(1, sizeof *k);
    if (k) k->steps = calloc(1, sizeof *k->steps);
    if (!k || !k->steps) {
        free(k);
        return p->host->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    }
    onyx_status *st = add_step(p, k, n);
    if (st) {
        free_kernel(p, k);
        return st;
    }
    *out = k;
    return NULL;
}

static onyx_status *compile(void *pv, const onyx_ep_node *const *nodes, size_t n_nodes, const char *const *in_names,
                            size_t n_in, const char *const *out_names, size_t n_out, void **out) {
    provider *p = pv;
    const onyx_host_api *h = p->host;
    kernel *k = calloc(1, sizeof *k);
    if (!k) return h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    k->steps = calloc(n_nodes + 1, sizeof *k->steps);
    k->in_names = calloc(n_in + 1, sizeof *k->in_names);
    k->out_names = calloc(n_out + 1, sizeof *k->out_names);
    onyx_status *st = k->steps && k->in_names && k->out_names ? NULL
                    : h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    for (size_t i = 0; !st && i < n_nodes; i++) st = add_step(p, k, nodes[i]);
    for (size_t i = 0; !st && i < n_in; i++, k->n_in++)
        if (!(k->in_names[i] = dup(in_names[i]))) st = h->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; !st && i < n_out; i++, k->n_out++)
        if (!(k->out_names[i] = dup(out_names[i]))) st = h->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st) {
        free_kernel(p, k);
        return st;
    }
    *out = k;
    return NULL;
}

/* ---- compute ---- */

typedef struct slot {
    const char *name;
    int32_t rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    float *host;       /* real address of the data */
    int owned;         /* scratch of a compiled group, freed at the end */
} slot;

static onyx_status *broadcast(const onyx_host_api *h, const slot *a, const slot *b, slot *y) {
    y->rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < y->rank; i++) {
        int64_t da = i - (y->rank - a->rank) >= 0 ? a->dims[i - (y->rank - a->rank)] : 1;
        int64_t db = i - (y->rank - b->rank) >= 0 ? b->dims[i - (y->rank - b->rank)] : 1;
        if (da != db && da != 1 && db != 1)
            return h->error(ONYX_ERR_INVALID_ARGUMENT, "example provider: shapes do not broadcast (dim %d: %lld vs %lld)",
                            i, (long long)da, (long long)db);
        y->dims[i] = da == 1 ? db : da;
    }
    return NULL;
}

static int64_t numel(const slot *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->dims[i];
    return n;
}

/* element i of y read from x (broadcast) */
static int64_t bcast_index(const slot *x, const slot *y, int64_t i) {
    int64_t off = 0, stride = 1;
    for (int d = y->rank - 1; d >= 0; d--) {
        int64_t c = i % y->dims[d];
        i /= y->dims[d];
        int xd = d - (y->rank - x->rank);
        if (xd >= 0) {
            if (x->dims[xd] != 1) off += c * stride;
            stride *= x->dims[xd];
        }
    }
    return off;
}

static void run_step(const step *s, const slot *a, const slot *b, slot *y) {
    int64_t n = numel(y);
    for (int64_t i = 0; i < n; i++) {
        float x = a->host[bcast_index(a, y, i)];
        float z = s->op == OP_RELU ? 0 : b->host[bcast_index(b, y, i)];
        y->host[i] = s->op == OP_ADD ? x + z : s->op == OP_SUB ? x - z : s->op == OP_MUL ? x * z : (x > 0 ? x : 0);
    }
}

static slot *find_slot(slot *slots, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(slots[i].name, name)) return &slots[i];
    return NULL;
}

static onyx_status *compute(void *pv, void *kv, onyx_ep_ctx *ctx) {
    provider *p = pv;
    const onyx_host_api *h = p->host;
    kernel *k = kv;
    size_t cap = k->n_steps + (k->n_in ? k->n_in : 2) + 1;
    slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
    size_t n = 0;
    onyx_status *st = NULL;
    /* inputs: by position (single node) or by the group's input names */
    size_t n_in = k->n_in ? k->n_in : (size_t)k->steps[0].n_in;
    for (size_t i = 0; i < n_in; i++) {
        onyx_ep_tensor t;
        if (!h->ctx_input(ctx, i, &t) || t.dtype != ONYX_FLOAT || t.on_host) {
            st = h->error(ONYX_ERR_INVALID_ARGUMENT, "example provider: input %zu must be a float tensor in its memory", i);
            break;
        }
        slot *s = &slots[n++];
        s->name = k->n_in ? k->in_names[i] : k->steps[0].in[i];
        s->rank = t.rank;
        memcpy(s->dims, t.dims, (size_t)t.rank * sizeof *t.dims);
        s->host = to_host(t.data);
    }
    for (size_t i = 0; !st && i < k->n_steps; i++) {
        const step *sp = &k->steps[i];
        slot *a = find_slot(slots, n, sp->in[0]), *b = sp->n_in > 1 ? find_slot(slots, n, sp->in[1]) : a;
        if (!a || !b) {
            st = h->error(ONYX_ERR_RUNTIME, "example provider: value '%s' not available", !a ? sp->in[0] : sp->in[1]);
            break;
        }
        slot *y = &slots[n++];
        y->name = sp->out;
        if ((st = broadcast(h, a, b, y))) break;
        /* the node's or group's output goes to the host's buffer, scratch otherwise */
        size_t out_k = 0;
        int is_out = !k->n_out;
        for (size_t o = 0; o < k->n_out; o++)
            if (!strcmp(k->out_names[o], sp->out)) is_out = 1, out_k = o;
        if (is_out) {
            onyx_ep_tensor t;
            if ((st = h->ctx_output(ctx, out_k, ONYX_FLOAT, y->rank, y->dims, &t))) break;
            y->host = to_host(t.data);
        } else {
            y->host = malloc((size_t)numel(y) * sizeof(float) + 1);
            y->owned = 1;
            if (!y->host) {
                st = h->error(ONYX_ERR_OUT_OF_MEMORY, "example provider: out of memory");
                break;
            }
        }
        run_step(sp, a, b, y);
    }
    for (size_t i = 0; i < n; i++)
        if (slots[i].owned) free(slots[i].host);
    free(slots);
    return st;
}

/* Runs begun and ended (interface 2.1), for the tests. A begun run's state
 * is checked when it ends. */
ONYX_EP_EXPORT unsigned long onyx_example_runs[2];
static char run_token;

static onyx_status *begin_run(void *p, const onyx_ep_run_info *run, void **state) {
    provider *sp = p;
    if (!run || run->struct_size < sizeof *run || (run->n_inputs && (!run->inputs || !run->input_names)))
        return sp->host->error(ONYX_ERR_INVALID_ARGUMENT, "example provider: bad run info");
    __atomic_fetch_add(&onyx_example_runs[0], 1, __ATOMIC_RELAXED);
    *state = &run_token;
    return NULL;
}

static onyx_status *end_run(void *p, void *state, int failed) {
    provider *sp = p;
    (void)failed;
    if (state != &run_token) return sp->host->error(ONYX_ERR_RUNTIME, "example provider: end_run without begin_run");
    __atomic_fetch_add(&onyx_example_runs[1], 1, __ATOMIC_RELAXED);
    return NULL;
}

static const onyx_ep_plugin plugin = {
    .api_version = EXAMPLE_API_VERSION,
    .struct_size = EXAMPLE_TABLE_SIZE,
    .name = "example",
    .create = create,
    .destroy = destroy,
    .device_name = device_name,
    .alloc = dev_alloc,
    .free = dev_free,
    .copy = dev_copy,
    .claim = claim,
    .get_capability = get_capability,
    .create_kernel = create_kernel,
    .compile = compile,
    .compute = compute,
    .free_kernel = free_kernel,
    .begin_run = begin_run,
    .end_run = end_run,
};

ONYX_EP_EXPORT const onyx_ep_plugin *onyx_provider_plugin(uint32_t host_api_version) {
    (void)host_api_version;
    return &plugin;
}
