/* The CPU execution provider: claims every node the kernel registry has a
 * kernel for, and runs kernels on host memory. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "providers/provider.h"
#include "providers/cpu/build_options.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/platform.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "core/log.h"

/* The CPU provider's state: what the session configuration asked of it. */
typedef struct cpu_provider {
    onyx_provider base;
    bool bf16_fastmath; /* float32 GEMM weights packed as bfloat16 */
} cpu_provider;

static int node_type_dtype(const onyx_graph *g, const onyx_node *n, int input) {
    if (input < 0 || (size_t)input >= n->n_in || n->in[input] < 0) return 0;
    return g->values[n->in[input]].type.dtype;
}

static const onyx_op_def *lookup(const onyx_graph *g, const onyx_node *n) {
    /* the constraining input differs per def; try without a type first to
     * learn which input constrains, then with its type */
    const onyx_op_def *d = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, 0);
    if (!d) return NULL;
    int dt = node_type_dtype(g, n, d->type_input);
    return dt ? onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, dt) : d;
}

static bool cpu_claims(const onyx_provider *p, const onyx_graph *g, const onyx_node *n) {
    return lookup(g, n) != NULL;
}

static void cpu_why_not(const onyx_provider *p, const onyx_graph *g, const onyx_node *n, char *buf,
                        size_t len) {
    const char *dom = n->domain[0] ? n->domain : "ai.onnx";
    const char *left_out = onyx_cpu_left_out(n->domain, n->op_type);
    if (left_out) {
        snprintf(buf, len, "operator %s (domain %s) is not in this build: %s", n->op_type, dom, left_out);
        return;
    }
    if (!onyx_cpu_has_op(n->domain, n->op_type)) {
        snprintf(buf, len, "operator %s (domain %s) is not implemented", n->op_type, dom);
        return;
    }
    const onyx_op_def *d = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, 0);
    if (!d) {
        snprintf(buf, len, "operator %s is not implemented for opset %d of domain %s", n->op_type,
                 n->opset, dom);
        return;
    }
    int dt = node_type_dtype(g, n, d->type_input);
    const char *type_left_out = onyx_cpu_type_left_out(dt);
    snprintf(buf, len, "operator %s (opset %d) is not %s for element type %s%s%s", n->op_type, n->opset,
             type_left_out ? "in this build" : "implemented", onyx_dtype_name(dt), type_left_out ? ": " : "",
             type_left_out ? type_left_out : "");
}

static onyx_status *cpu_create_kernel(const onyx_provider *p, const onyx_graph *g,
                                      const onyx_node *n, onyx_kernel *k) {
    const onyx_op_def *d = lookup(g, n);
    if (!d) return ONYX_NOT_IMPLEMENTED("no CPU kernel");
    k->provider = p;
    k->impl = (void *)d;
    k->state = NULL;
    if (!d->init) return NULL;
    const onyx_type **types = calloc(n->n_in + 1, sizeof *types);
    const onyx_value **consts = calloc(n->n_in + 1, sizeof *consts);
    if (!types || !consts) {
        free(types);
        free(consts);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < n->n_in; i++) {
        int32_t v = n->in[i];
        types[i] = v >= 0 ? &g->values[v].type : NULL;
        consts[i] = v >= 0 && g->values[v].source == ONYX_VAL_INITIALIZER ? g->values[v].constant : NULL;
    }
    /* weight packing runs on the session's threads, in bfloat16 under
     * fast-math except for kernels that run once on constants (folding):
     * the packers get both through info.pack */
    const cpu_provider *cp = p->impl;
    const onyx_pack_ctx pack = {.pool = p->host ? p->host->init_pool : NULL,
                                .bf16 = cp && cp->bf16_fastmath && !k->once};
    onyx_kernel_info info = {
        .node = n, .model = g->model, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
        .in_types = types, .const_in = consts, .host = p->host, .pack = &pack,
    };
    onyx_status *st = d->init(&info, &k->state);
    free(types);
    free(consts);
    return st;
}

static void cpu_free_kernel(const onyx_provider *p, onyx_kernel *k) {
    const onyx_op_def *d = k->impl;
    if (d && d->free_state && k->state) d->free_state(k->state);
    k->state = NULL;
}

static bool cpu_kernel_owns_input(const onyx_provider *p, const onyx_kernel *k, size_t input) {
    const onyx_op_def *d = k->impl;
    return d && d->consumes_const_input && k->state && d->consumes_const_input(k->state, input);
}

static int cpu_output_shares_input(const onyx_provider *p, const onyx_kernel *k) {
    const onyx_op_def *d = k->impl;
    return d && d->output_shares_input && k->state ? d->output_shares_input(k->state) : -1;
}

static onyx_status *cpu_run(const onyx_provider *p, const onyx_kernel *k, onyx_kernel_ctx *ctx) {
    const onyx_op_def *d = k->impl;
    ctx->state = k->state;
    ctx->host = p->host;
    return d->compute(ctx);
}

static int cpu_layout_block(const onyx_provider *p) { return onyx_cpu_nchwc_block(); }

static void cpu_destroy(onyx_provider *p) { free(p->impl); }

/* "session.onyx.cpu_isa" = avx512|avx2|neon|generic: the kernels of that
 * ISA (at most what the CPU has). */
static onyx_status *apply_isa(const char *name) {
    if (!name || !*name) return NULL;
    onyx_cpu_isa isa;
    if (!onyx_cpu_isa_parse(name, &isa))
        return ONYX_INVALID_ARG("config entry session.onyx.cpu_isa = '%s': expected avx512, avx2, neon or generic", name);
    if (!onyx_cpu_force_isa(name))
        return ONYX_INVALID_ARG("config entry session.onyx.cpu_isa = '%s': this CPU supports at most %s", name,
                                onyx_cpu_isa_name(onyx_cpu_detected()));
    return NULL;
}

/* "session.enable_bf16_fastmath" = "1": float32 GEMM weights packed as
 * bfloat16 on the path sgemm_bf16.h's rule picks; elsewhere ignored. The
 * decision and its reason are logged once per process (again only if a
 * later session's differs: ONYX_ISA/session.onyx.cpu_isa can change it). */
static bool want_bf16(const onyx_env *env, const char *v) {
    static _Atomic int logged = -1;
    if (!v || strcmp(v, "1")) return false;
    const char *why;
    onyx_bf16_path path = onyx_bf16_path_here(&why);
    if (atomic_exchange(&logged, (int)path) != (int)path)
        onyx_log(env, path ? ONYX_LOG_INFO : ONYX_LOG_WARNING,
                 path ? "bf16 fast-math: %s" : "session.enable_bf16_fastmath ignored: %s; float32 kept", why);
    return path != ONYX_BF16_OFF;
}

static onyx_status *cpu_configure(onyx_provider *p, const onyx_env *env, onyx_config_get get, const void *src) {
    cpu_provider *cp = p->impl;
    ONYX_TRY(apply_isa(get(src, "session.onyx.cpu_isa")));
    cp->bf16_fastmath = want_bf16(env, get(src, "session.enable_bf16_fastmath"));
    return NULL;
}

static const onyx_provider_vtable cpu_vtable = {
    .name = "cpu",
    .claims = cpu_claims,
    .why_not = cpu_why_not,
    .create_kernel = cpu_create_kernel,
    .free_kernel = cpu_free_kernel,
    .kernel_owns_input = cpu_kernel_owns_input,
    .output_shares_input = cpu_output_shares_input,
    .run = cpu_run,
    .destroy = cpu_destroy,
    .layout_block = cpu_layout_block,
    .configure = cpu_configure,
    .takes_rest = true,
};

onyx_status *onyx_cpu_provider_create(const char *const *keys, const char *const *values,
                                      size_t n, onyx_provider **out) {
    for (size_t i = 0; i < n; i++)
        return ONYX_INVALID_ARG("cpu provider: unknown option '%s'", keys[i]);
    cpu_provider *cp = calloc(1, sizeof *cp);
    if (!cp) return ONYX_OOM();
    onyx_provider *p = &cp->base;
    p->impl = cp;
    p->vt = &cpu_vtable;
    snprintf(p->name, sizeof p->name, "cpu");
    *out = p;
    return NULL;
}
