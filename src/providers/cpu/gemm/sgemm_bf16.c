/* bfloat16 fast-math GEMM: packing, the driver and the portable reference
 * kernel (see sgemm_bf16.h). The driver splits C into tiles of up to MC
 * rows and NCS strips run on the thread pool, and runs the kernel over
 * every strip x panel of a tile, so a strip of B stays in L1 across the
 * panels. A (rounded to bfloat16 pairs) is packed once per call when C
 * has several tile columns and A fits SHARED_A_MAX_PAIRS (the threads pack
 * it together, then share it read-only, as gemm.c's share_a does for
 * float32); otherwise each tile packs its rows once per K block. The bias
 * and activation of the epilogue are applied over the tile at the end,
 * once per element. */
#include "providers/cpu/gemm/sgemm_bf16.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/dtype_ext.h"
#include "core/value.h"
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/platform.h"

#define KC_BF16 512     /* K per block: an 8-row panel is 16 KiB, a 48-column strip 48 KiB */
#define MC_BF16 96      /* rows per tile: 12 panels */
#define NCS_BF16 4      /* strips per tile */
#define SHARED_A_MAX_PAIRS ((size_t)2 << 20)   /* 8 MiB of packed A, kept per calling thread */

/* ---- availability: the rule (sgemm_bf16.h, onyx_bf16_path) ---- */

onyx_bf16_path onyx_bf16_path_for(const onyx_bf16_cpu *c, const char **why) {
    const char *w;
    onyx_bf16_path path = ONYX_BF16_OFF;
    if (!c->avx512bf16 || c->disable_avx512bf16)
        w = c->avx512bf16 ? "no AVX512-BF16 (ONYX_CPU_DISABLE=avx512bf16)" : "no AVX512-BF16 on this CPU";
    else if (!c->avx512_table)
        w = "the dispatch table is below AVX-512 (ONYX_ISA or session.onyx.cpu_isa)";
    else if (c->amx_usable && !c->disable_amx)
        w = "AMX-BF16", path = ONYX_BF16_AMX;
    else if (c->disable_amx)
        w = "VDPBF16PS, forced by ONYX_CPU_DISABLE=amx", path = ONYX_BF16_VDPBF16PS;
    else if (c->amd)
        w = "VDPBF16PS on an AMD core without AMX", path = ONYX_BF16_VDPBF16PS;
    else
        w = "not AMD and no usable AMX: Intel issues VDPBF16PS at half float32's rate (ONYX_CPU_DISABLE=amx "
            "forces it)";
    if (why) *why = w;
    return path;
}

/* Names in ONYX_CPU_DISABLE that are not amx or avx512bf16 (platform.c
 * ignores them). */
static void report_unknown_disabled(void) {
    for (const char *p = getenv("ONYX_CPU_DISABLE"); p && *p; p += *p == ',') {
        size_t n = strcspn(p, ",");
        if (n && !(n == 3 && !strncmp(p, "amx", 3)) && !(n == 10 && !strncmp(p, "avx512bf16", 10)))
            fprintf(stderr, "onyx: ONYX_CPU_DISABLE: '%.*s' is not amx or avx512bf16; ignored\n", (int)n, p);
        p += n;
    }
}

/* This CPU's facts but the table, read once (bit 0: valid, then
 * avx512bf16, amx_usable, amd, disable_amx, disable_avx512bf16). */
static int cpu_facts(void) {
    static _Atomic int facts = 0;
    int f = atomic_load(&facts);
    if (!f) {
        report_unknown_disabled();
        f = 1;
#if defined(__x86_64__)
        __builtin_cpu_init();
        f |= (__builtin_cpu_supports("avx512bf16") ? 2 : 0) | (onyx_bf16_amx_usable() ? 4 : 0) |
             (__builtin_cpu_is("amd") ? 8 : 0);
#endif
        f |= (onyx_cpu_disabled("amx") ? 16 : 0) | (onyx_cpu_disabled("avx512bf16") ? 32 : 0);
        atomic_store(&facts, f);
    }
    return f;
}

onyx_bf16_path onyx_bf16_path_here(const char **why) {
    int f = cpu_facts();
    onyx_bf16_cpu c = {.avx512bf16 = f & 2, .amx_usable = f & 4, .amd = f & 8, .disable_amx = f & 16,
                       .disable_avx512bf16 = f & 32, .avx512_table = onyx_cpu()->isa == ONYX_CPU_AVX512};
    return onyx_bf16_path_for(&c, why);
}

bool onyx_bf16_fastmath_available(void) { return onyx_bf16_path_here(NULL) != ONYX_BF16_OFF; }

static const onyx_bf16_isa *best_isa(void) {
#if defined(__x86_64__)
    onyx_bf16_path path = onyx_bf16_path_here(NULL);
    if (path != ONYX_BF16_OFF) return path == ONYX_BF16_AMX ? &onyx_bf16_isa_amx : &onyx_bf16_isa_avx512;
#endif
    return &onyx_bf16_isa_portable;
}

/* ---- the portable kernel (reference of the same rounding) ---- */

static void kernel_portable(const onyx_bf16_kargs *ka) {
    const size_t MR = 8, NR = onyx_bf16_isa_portable.nr;
    for (size_t i = 0; i < ka->mr; i++)
        for (size_t j = 0; j < ka->nr; j++) {
            float acc = 0.0f;
            for (size_t p = 0; p < ka->kp; p++) {
                uint32_t a = ka->a[p * MR + i];
                const uint16_t *b = ka->b + (p * NR + j) * 2;
                acc += onyx_bf16_to_f32_inline((uint16_t)(a >> 16)) * onyx_bf16_to_f32_inline(b[1]);
                acc += onyx_bf16_to_f32_inline((uint16_t)a) * onyx_bf16_to_f32_inline(b[0]);
            }
            float *c = ka->c + i * ka->ldc + j;
            float x = ka->alpha * acc;
            if (!ka->first) x += *c;
            else if (ka->load_c) x += ka->beta * *c;
            *c = x;
        }
}

const onyx_bf16_isa onyx_bf16_isa_portable = {"portable", 8, 48, 2, false, kernel_portable, NULL, NULL, NULL};

/* ---- packing ---- */

/* Pairs of a K block of kc values, padded for the kernel. */
static size_t block_pairs(size_t kc, size_t kstep) { return (kc + kstep - 1) / kstep * kstep / 2; }

static size_t k_block(size_t K) {
    if (K == 0) return 0;
    size_t blocks = (K + KC_BF16 - 1) / KC_BF16;
    size_t kc = (K + blocks - 1) / blocks;
    return (kc + 31) & ~(size_t)31;   /* blocks never split a pair or an AMX tile's depth */
}

typedef struct pack_job {
    onyx_bf16_mat *m;
    const float *B;
    size_t ldb;
    bool trans;
} pack_job;

static float b_at(const pack_job *j, size_t k, size_t n) {
    if (k >= j->m->K || n >= j->m->N) return 0.0f;
    return j->trans ? j->B[n * j->ldb + k] : j->B[k * j->ldb + n];
}

/* Strips [begin, end) of every K block. */
static void pack_strips(void *arg, size_t begin, size_t end) {
    const pack_job *j = arg;
    const onyx_bf16_mat *m = j->m;
    const size_t NR = m->nr;
    for (size_t pc = 0; pc < m->K; pc += m->kcb) {
        size_t kc = m->K - pc < m->kcb ? m->K - pc : m->kcb, kp = block_pairs(kc, m->kstep);
        uint16_t *block = m->data + pc * m->strips * NR;   /* pc is even: pairs before it = pc/2 */
        for (size_t s = begin; s < end; s++) {
            uint16_t *dst = block + s * kp * NR * 2;
            for (size_t p = 0; p < kp; p++)
                for (size_t c = 0; c < NR; c++) {
                    dst[(p * NR + c) * 2] = onyx_f32_to_bf16_inline(b_at(j, pc + 2 * p, s * NR + c));
                    dst[(p * NR + c) * 2 + 1] = onyx_f32_to_bf16_inline(b_at(j, pc + 2 * p + 1, s * NR + c));
                }
        }
    }
}

onyx_status *onyx_bf16_pack_b(const onyx_bf16_isa *isa, onyx_threadpool *pool, bool transB, size_t K, size_t N,
                              const float *B, size_t ldb, onyx_bf16_mat **out) {
    *out = NULL;
    if (!isa) isa = best_isa();
    onyx_bf16_mat *m = calloc(1, sizeof *m);
    if (!m) return ONYX_OOM();
    m->K = K;
    m->N = N;
    m->nr = isa->nr;
    m->kcb = k_block(K);
    m->kstep = isa->kstep;
    m->strips = (N + isa->nr - 1) / isa->nr;
    /* every block but the last is a multiple of 32: the last's padding bounds the total */
    size_t k_pad = K + 32, n, bytes;
    if (onyx_mul_overflow_size(k_pad, m->strips * isa->nr, &n) || onyx_mul_overflow_size(n, 2, &bytes) ||
        bytes > ONYX_MAX_TENSOR_BYTES) {
        free(m);
        return ONYX_INVALID_ARG("gemm: matrix of %zu x %zu too large to pack", K, N);
    }
    m->data = onyx_alloc(bytes ? bytes : 64);
    if (!m->data) {
        free(m);
        return ONYX_OOM();
    }
    m->bytes = bytes + sizeof *m;
    pack_job j = {m, B, ldb, transB};
    if (K && N) onyx_parallel_for(pool, m->strips, 1, pack_strips, &j);
    *out = m;
    return NULL;
}

void onyx_bf16_mat_free(onyx_bf16_mat *m) {
    if (!m) return;
    onyx_free(m->data);
    free(m);
}

/* Rows [i0, i0 + mr) of op(A), columns [p0, p0 + kc), as kp pairs per
 * row into a panel of MR rows (rows mr..MR and the padding zeroed). */
static void pack_a_panel(const onyx_bf16_isa *isa, const float *A, size_t lda, bool trans, size_t i0, size_t mr,
                         size_t p0, size_t kc, size_t kp, uint32_t *dst) {
    const size_t MR = isa->mr;
    for (size_t i = 0; i < MR; i++) {
        /* row i's pair p goes to dst[i * rs + p * ps] */
        size_t rs = isa->a_rows ? kp : 1, ps = isa->a_rows ? 1 : MR;
        uint32_t *row = dst + i * rs;
        if (i >= mr) {
            for (size_t p = 0; p < kp; p++) row[p * ps] = 0;
            continue;
        }
        if (!trans && isa->a_rows && isa->row_convert) {   /* contiguous: vector conversion */
            isa->row_convert(A + (i0 + i) * lda + p0, kc, row, kp);
            continue;
        }
        for (size_t p = 0; p < kp; p++) {
            size_t k0 = p0 + 2 * p;
            float x0 = 2 * p < kc ? (trans ? A[k0 * lda + i0 + i] : A[(i0 + i) * lda + k0]) : 0.0f;
            float x1 = 2 * p + 1 < kc ? (trans ? A[(k0 + 1) * lda + i0 + i] : A[(i0 + i) * lda + k0 + 1]) : 0.0f;
            row[p * ps] = onyx_f32_to_bf16_inline(x0) | (uint32_t)onyx_f32_to_bf16_inline(x1) << 16;
        }
    }
}

/* ---- the driver ---- */

typedef struct gemm_job {
    const onyx_bf16_isa *isa;
    size_t M;
    float alpha, beta;
    const float *A;
    size_t lda;
    bool transA;
    const onyx_bf16_mat *B;
    float *C;
    size_t ldc;
    const onyx_gemm_epilogue *ep;
    size_t tiles_m, tiles_n;
    const uint32_t *a_shared;   /* all of A packed (a_offset's layout), or NULL: tiles pack it */
    size_t m_padded;            /* rows of a_shared: M rounded up to MR */
    bool failed;
} gemm_job;

/* Where the shared A holds K block pc: each block is m_padded rows of its
 * pairs, in tile order (row i of a panel block at i * kp); the blocks
 * before pc all have kcb / 2 pairs (kcb is a multiple of 32). */
static size_t a_offset(const gemm_job *j, size_t pc) { return pc / 2 * j->m_padded; }

static void apply_epilogue(const gemm_job *j, size_t m0, size_t m1, size_t n0, size_t n1) {
    const onyx_gemm_epilogue *ep = j->ep;
    if (!ep || (!ep->bias && ep->act == ONYX_GEMM_ACT_NONE)) return;
    for (size_t i = m0; i < m1; i++) {
        float *c = j->C + i * j->ldc;
        float br = ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_ROW ? ep->bias[i] : 0.0f;
        const float *bc = ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_COL ? ep->bias : NULL;
        for (size_t n = n0; n < n1; n++)
            c[n] = onyx_gemm_act_scalar(c[n] + br + (bc ? bc[n] : 0.0f), (int)ep->act, ep->act_a, ep->act_b);
    }
}

/* Pairs of A over all K blocks, as the shared A lays them out. */
static size_t a_pairs(const onyx_bf16_mat *B) {
    size_t last = (B->K - 1) / B->kcb * B->kcb;
    return last / 2 + block_pairs(B->K - last, B->kstep);
}

/* Items [begin, end) of the shared A: (K block, panel) pairs. */
static void share_a_items(void *arg, size_t begin, size_t end) {
    const gemm_job *j = arg;
    const onyx_bf16_mat *B = j->B;
    const size_t MR = j->isa->mr, panels = j->m_padded / MR;
    uint32_t *dst = (uint32_t *)j->a_shared;
    for (size_t it = begin; it < end; it++) {
        size_t pc = it / panels * B->kcb, i = it % panels * MR;
        size_t kc = B->K - pc < B->kcb ? B->K - pc : B->kcb, kp = block_pairs(kc, B->kstep);
        pack_a_panel(j->isa, j->A, j->lda, j->transA, i, j->M - i < MR ? j->M - i : MR, pc, kc, kp,
                     dst + a_offset(j, pc) + i * kp);
    }
}

/* Pack all of A once into the calling thread's buffer (on the pool when
 * `parallel`) when C has several tile columns and A fits; otherwise leave
 * j->a_shared NULL and the tiles pack their rows themselves. */
static void share_a(gemm_job *j, onyx_threadpool *tp, bool parallel) {
    const size_t MR = j->isa->mr;
    j->m_padded = (j->M + MR - 1) / MR * MR;
    size_t pairs = a_pairs(j->B);
    if (j->tiles_n < 2 || pairs > SHARED_A_MAX_PAIRS / j->m_padded) return;
    uint32_t *buf = (uint32_t *)onyx_gemm_scratch(true, j->m_padded * pairs);
    if (!buf) return;
    j->a_shared = buf;
    size_t items = (j->B->K + j->B->kcb - 1) / j->B->kcb * (j->m_padded / MR);
    if (parallel && items > 1) onyx_parallel_for(tp, items, 1, share_a_items, j);
    else share_a_items(j, 0, items);
}

static void run_tile(gemm_job *j, size_t t, uint32_t *apack) {
    const onyx_bf16_mat *B = j->B;
    const size_t NR = B->nr, MR = j->isa->mr, tm = t / j->tiles_n, tn = t % j->tiles_n;
    const size_t m0 = tm * MC_BF16, m1 = m0 + MC_BF16 < j->M ? m0 + MC_BF16 : j->M;
    const size_t s0 = tn * NCS_BF16, s1 = s0 + NCS_BF16 < B->strips ? s0 + NCS_BF16 : B->strips;
    const size_t n1 = s1 * NR < B->N ? s1 * NR : B->N;
    onyx_bf16_kargs ka = {.c = NULL, .ldc = j->ldc, .alpha = j->alpha, .beta = j->beta};
    for (size_t pc = 0; pc < B->K; pc += B->kcb) {
        size_t kc = B->K - pc < B->kcb ? B->K - pc : B->kcb, kp = block_pairs(kc, B->kstep);
        const uint32_t *ablock = j->a_shared ? j->a_shared + a_offset(j, pc) + m0 * kp : apack;
        for (size_t i = m0; i < m1 && !j->a_shared; i += MR)
            pack_a_panel(j->isa, j->A, j->lda, j->transA, i, m1 - i < MR ? m1 - i : MR, pc, kc, kp,
                         apack + (i - m0) * kp);
        const uint16_t *block = B->data + pc * B->strips * NR;
        ka.kp = kp;
        ka.first = pc == 0;
        ka.load_c = pc == 0 && j->beta != 0.0f;
        for (size_t s = s0; s < s1; s++) {
            ka.b = block + s * kp * NR * 2;
            ka.nr = B->N - s * NR < NR ? B->N - s * NR : NR;
            for (size_t i = m0; i < m1; i += MR) {
                ka.a = ablock + (i - m0) * kp;
                ka.mr = m1 - i < MR ? m1 - i : MR;
                ka.c = j->C + i * j->ldc + s * NR;
                j->isa->kernel(&ka);
            }
        }
    }
    apply_epilogue(j, m0, m1, s0 * NR, n1);
}

static void run_tiles(void *arg, size_t begin, size_t end) {
    gemm_job *j = arg;
    size_t kp = j->B->kcb / 2;
    uint32_t *apack = j->a_shared ? NULL : (uint32_t *)onyx_gemm_scratch(false, MC_BF16 * kp + 16);
    if (!j->a_shared && !apack) {
        j->failed = true;
        return;
    }
    if (j->isa->begin) j->isa->begin();
    for (size_t t = begin; t < end; t++) run_tile(j, t, apack);
    if (j->isa->end) j->isa->end();
}

onyx_status *onyx_bf16_gemm(const onyx_bf16_isa *isa, size_t M, float alpha, const float *A, size_t lda,
                            bool transA, const onyx_bf16_mat *B, float beta, float *C, size_t ldc,
                            const onyx_gemm_epilogue *ep, onyx_threadpool *tp) {
    if (!isa) isa = best_isa();
    if (isa->nr != B->nr || isa->kstep != B->kstep) return ONYX_INVALID_ARG("gemm: bfloat16 matrix packed for another kernel");
    if (M == 0 || B->N == 0) return NULL;
    if (B->K == 0) {   /* no products: C = beta * C, then the epilogue */
        for (size_t i = 0; i < M; i++)
            for (size_t n = 0; n < B->N; n++) C[i * ldc + n] = beta != 0.0f ? beta * C[i * ldc + n] : 0.0f;
        gemm_job j0 = {.M = M, .C = C, .ldc = ldc, .ep = ep};
        apply_epilogue(&j0, 0, M, 0, B->N);
        return NULL;
    }
    gemm_job j = {.isa = isa, .M = M, .alpha = alpha, .beta = beta, .A = A, .lda = lda, .transA = transA,
                  .B = B, .C = C, .ldc = ldc, .ep = ep};
    j.tiles_m = (M + MC_BF16 - 1) / MC_BF16;
    j.tiles_n = (B->strips + NCS_BF16 - 1) / NCS_BF16;
    size_t tiles = j.tiles_m * j.tiles_n;
    bool parallel = tiles > 1 && (size_t)M * B->N * B->K >= (1u << 18);
    share_a(&j, tp, parallel);
    if (!parallel) run_tiles(&j, 0, tiles);
    else onyx_parallel_for(tp, tiles, 1, run_tiles, &j);
    return j.failed ? ONYX_OOM() : NULL;
}
