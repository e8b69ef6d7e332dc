/* SGEMM driver: blocking, packing, threading and the epilogue plumbing
 * around the per-ISA micro-kernels (see gemm.h for the contract).
 *
 * Loop nest of one C tile (rows [m0, m1), columns [n0, n1)):
 *   for jc in columns, step NC          B block of KC x NC lives in L2
 *     for pc in K, step KC              pack B[pc.., jc..] into NR-wide strips
 *       for ic in rows, step MC         pack MC / MR panels of A (MR x KC each)
 *         for jr in block, step NR      (run_block)
 *           for ir in ic block, step MR micro-kernel on an MR x NR tile of C
 * MC is one panel (kept in L1 against the B block in L2) or, where the ISA
 * says its KC x NR strip fits L1, several (the strip in L1, panels in L2).
 * The first K block stores alpha*AB + beta*C, later ones accumulate, and the
 * last applies bias and activation, so C is written K/KC times at most.
 *
 * Threads share C (disjoint tiles) and, when it is small enough, A packed
 * once for the whole call (share_a); B blocks are packed by each task into
 * its own (per-thread, reused) buffers unless B was packed at load, and
 * then the kernel calls of one block prefetch the next into L2. The tile
 * grid comes from a small cost model (plan_tiles): splitting N repacks A
 * (unless shared), splitting M repacks or re-reads B, and a few large
 * tiles balance worse than many small ones. */
#include "providers/cpu/gemm/gemm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/value.h"
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "providers/cpu/gemm/sgemm_half.h"
#include "providers/cpu/platform.h"

#define KC_MAX 256            /* K per block: bounds what stays in L1, an MR x KC A panel or a KC x NR B strip */
#define NC_TARGET 512         /* columns per B block: KC x NC floats = 512 KiB of L2 */
#define MIN_PARALLEL_WORK (1u << 18)   /* M*N*K below which threads cost more than they give */
#define STRIP_GAP 16                   /* floats between packed B strips (see run_tile) */
#define STRIP_PANELS 32                /* packed A panels per strip slice (isa->strip_k): 256 rows */

/* ---- kernel selection ---- */

/* The micro-kernel comes from the CPU dispatch table (platform.h). */
static const onyx_gemm_isa *current_isa(void) { return onyx_cpu()->gemm; }

const char *onyx_gemm_isa_name(void) { return current_isa()->name; }

/* ---- blocking ---- */

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

/* K block size: K split into equal blocks of at most KC_MAX, so a K of 300
 * runs as 150 + 150 rather than 256 + 44. Packed matrices use the same. */
static size_t k_block(size_t K) {
    if (K == 0) return 0;
    return div_up(K, div_up(K, KC_MAX));
}

static size_t n_block(const onyx_gemm_isa *isa) {
    size_t nc = NC_TARGET / isa->nr * isa->nr;
    return nc ? nc : isa->nr;
}

/* ---- packed matrices ---- */

struct onyx_packed_mat {
    const onyx_gemm_isa *isa;
    bool is_b;          /* right-hand (B) or left-hand (A) operand */
    size_t outer;       /* N for B, M for A */
    size_t K;
    size_t padded;      /* outer rounded up to NR (B) or MR (A) */
    size_t kcb;         /* K block size used for the layout */
    float *data;        /* per K block at pc: padded * kc floats, strips/panels in order */
    size_t bytes;
    onyx_bf16_mat *bf16;   /* bf16 fast-math: B held as bfloat16 pairs instead (data NULL) */
    uint16_t *half;        /* float16 weights: B in the layout of data, as float16 (data NULL) */
};

/* ---- packing ---- */

/* Inline 4-float moves: panels and strips are a few vectors wide, too
 * short for a library call per row to pay off. */
typedef float v4f __attribute__((vector_size(16), aligned(4), may_alias));

/* Panel of op(A): rows [i0, i0 + mr), columns [p0, p0 + kc) into
 * dst[p * MR + i]. Rows mr..MR are left as they are (never read). */
static void pack_a_panel(const onyx_gemm_isa *isa, const float *A, size_t lda, bool trans, size_t i0,
                         size_t mr, size_t p0, size_t kc, float *dst) {
    const size_t MR = isa->mr;
    if (trans) {   /* op(A)(i, p) = A[p][i]: each step is a contiguous run */
        const float *src = A + p0 * lda + i0;
        if (mr == 8 && MR == 8) {
            for (size_t p = 0; p < kc; p++, src += lda) {
                *(v4f *)(dst + p * 8) = *(const v4f *)src;
                *(v4f *)(dst + p * 8 + 4) = *(const v4f *)(src + 4);
            }
            return;
        }
        for (size_t p = 0; p < kc; p++, src += lda) memcpy(dst + p * MR, src, mr * sizeof(float));
        return;
    }
    if (mr == 8 && MR == 8 && isa->transpose8) {
        isa->transpose8(A + i0 * lda + p0, lda, kc, dst, MR);
        return;
    }
    if (mr == MR && isa->pack_a) {
        isa->pack_a(A + i0 * lda + p0, lda, kc, dst);
        return;
    }
    const float *rows[16];
    if (mr <= 16) {   /* read the rows in parallel so the writes stay sequential */
        for (size_t i = 0; i < mr; i++) rows[i] = A + (i0 + i) * lda + p0;
        for (size_t p = 0; p < kc; p++)
            for (size_t i = 0; i < mr; i++) dst[p * MR + i] = rows[i][p];
        return;
    }
    for (size_t i = 0; i < mr; i++)
        for (size_t p = 0; p < kc; p++) dst[p * MR + i] = A[(i0 + i) * lda + p0 + p];
}


/* Copy one row of nc values into NR-wide strips (stride `strip` floats),
 * zero-padding the last strip so the kernel may read whole vectors. */
static void scatter_row(const float *src, size_t nc, size_t NR, float *dst, size_t strip) {
    size_t j = 0;
    if (NR % 4 == 0)
        for (; j + NR <= nc; j += NR, dst += strip)
            for (size_t e = 0; e < NR; e += 4) *(v4f *)(dst + e) = *(const v4f *)(src + j + e);
    for (; j < nc; j += NR, dst += strip) {
        size_t w = nc - j < NR ? nc - j : NR;
        memcpy(dst, src + j, w * sizeof(float));
        if (w < NR) memset(dst + w, 0, (NR - w) * sizeof(float));
    }
}

/* Block of op(B): rows [p0, p0 + kc), columns [j0, j0 + nc) into strips:
 * dst[s * strip + p * NR + j] for column s * NR + j (strip >= kc * NR). */
static void pack_b_block(const onyx_gemm_isa *isa, const onyx_gemm_operand *B, size_t p0, size_t kc,
                         size_t j0, size_t nc, float *dst, size_t strip) {
    const size_t NR = isa->nr;
    if (B->block_fn) {
        B->block_fn(B->row_ctx, p0, kc, j0, nc, NR, dst, strip);
    } else if (B->row_fn) {
        size_t tail = nc % NR ? NR - nc % NR : 0;   /* zero padding of the last strip */
        for (size_t p = 0; p < kc; p++) {
            onyx_gemm_row_out out = {.p = dst + p * NR, .room = NR, .nr = NR, .jump = strip - NR};
            B->row_fn(B->row_ctx, p0 + p, j0, nc, &out);
            if (tail) memset(dst + (nc / NR) * strip + p * NR + NR - tail, 0, tail * sizeof(float));
        }
    } else if (!B->trans) {
        for (size_t p = 0; p < kc; p++)
            scatter_row(B->data + (p0 + p) * B->ld + j0, nc, NR, dst + p * NR, strip);
    } else {       /* op(B)(p, j) = B[j][p]: transpose strip by strip */
        for (size_t j = 0; j < nc; j += NR, dst += strip) {
            size_t w = nc - j < NR ? nc - j : NR, jj = 0;
            if (isa->transpose8)   /* 8 columns of the strip = 8 rows of B at a time */
                for (; jj + 8 <= w; jj += 8)
                    isa->transpose8(B->data + (j0 + j + jj) * B->ld + p0, B->ld, kc, dst + jj, NR);
            for (; jj < w; jj++) {
                const float *src = B->data + (j0 + j + jj) * B->ld + p0;
                for (size_t p = 0; p < kc; p++) dst[p * NR + jj] = src[p];
            }
            if (w < NR)
                for (size_t p = 0; p < kc; p++) memset(dst + p * NR + w, 0, (NR - w) * sizeof(float));
        }
    }
}

/* half: the same layout in float16 (p->half instead of p->data). */
static onyx_status *packed_new(const onyx_gemm_isa *isa, bool is_b, size_t outer, size_t K, bool zero, bool half,
                               onyx_packed_mat **out) {
    *out = NULL;
    size_t unit = is_b ? isa->nr : isa->mr;
    size_t padded, n, bytes;
    if (onyx_add_overflow_size(outer, unit - 1, &padded))
        return ONYX_INVALID_ARG("gemm: matrix too large to pack");
    padded = padded / unit * unit;
    if (onyx_mul_overflow_size(padded, K, &n) ||
        onyx_mul_overflow_size(n, half ? sizeof(uint16_t) : sizeof(float), &bytes) ||
        bytes > ONYX_MAX_TENSOR_BYTES)
        return ONYX_INVALID_ARG("gemm: matrix of %zu x %zu too large to pack", outer, K);
    onyx_packed_mat *p = calloc(1, sizeof *p);
    if (!p) return ONYX_OOM();
    void *d = zero ? onyx_alloc_zeroed(bytes ? bytes : sizeof(float)) : onyx_alloc(bytes ? bytes : sizeof(float));
    if (half) p->half = d;
    else p->data = d;
    if (!d) {
        free(p);
        return ONYX_OOM();
    }
    p->isa = isa;
    p->is_b = is_b;
    p->outer = outer;
    p->K = K;
    p->padded = padded;
    p->kcb = k_block(K);
    p->bytes = bytes + sizeof *p;
    *out = p;
    return NULL;
}

/* Packing B by (K block, column range) items, on the session's threads
 * while it loads (the pack context's pool). */
#define PACK_B_COLUMN_PARTS 4
typedef struct pack_b_job {
    const onyx_gemm_isa *isa;
    const onyx_gemm_operand *op;
    onyx_packed_mat *p;
    size_t K, N, strips_per_part;
} pack_b_job;

static void pack_b_items(void *arg, size_t begin, size_t end) {
    const pack_b_job *j = arg;
    const size_t NR = j->isa->nr;
    for (size_t it = begin; it < end; it++) {
        size_t pc = it / PACK_B_COLUMN_PARTS * j->p->kcb, part = it % PACK_B_COLUMN_PARTS;
        size_t kc = j->K - pc < j->p->kcb ? j->K - pc : j->p->kcb;
        size_t j0 = part * j->strips_per_part * NR;
        if (j0 >= j->N) continue;
        size_t nc = j->N - j0 < j->strips_per_part * NR ? j->N - j0 : j->strips_per_part * NR;
        pack_b_block(j->isa, j->op, pc, kc, j0, nc, j->p->data + pc * j->p->padded + j0 * kc, kc * NR);
    }
}

/* bf16 fast-math (sgemm_bf16.h): the weights as bfloat16 pairs. */
static onyx_status *pack_b_bf16(const onyx_pack_ctx *pk, bool transB, size_t K, size_t N, const float *B, size_t ldb,
                                onyx_packed_mat **out) {
    onyx_packed_mat *p = calloc(1, sizeof *p);
    if (!p) return ONYX_OOM();
    onyx_status *st = onyx_bf16_pack_b(NULL, onyx_pack_pool(pk), transB, K, N, B, ldb, &p->bf16);
    if (st) {
        free(p);
        return st;
    }
    p->isa = current_isa();
    p->is_b = true;
    p->outer = N;
    p->K = K;
    p->bytes = p->bf16->bytes + sizeof *p;
    *out = p;
    return NULL;
}

onyx_status *onyx_sgemm_pack_b(const onyx_pack_ctx *pk, bool transB, size_t K, size_t N, const float *B, size_t ldb,
                               onyx_packed_mat **out) {
    if (pk && pk->bf16 && onyx_bf16_fastmath_available()) return pack_b_bf16(pk, transB, K, N, B, ldb, out);
    const onyx_gemm_isa *isa = current_isa();
    /* pack_b_block writes every element, padding strips included */
    ONYX_TRY(packed_new(isa, true, N, K, false, false, out));
    onyx_packed_mat *p = *out;
    if (K == 0 || N == 0 || p->kcb == 0) return NULL;
    onyx_gemm_operand op = {.data = B, .ld = ldb, .trans = transB};
    size_t strips = (N + isa->nr - 1) / isa->nr;
    pack_b_job j = {isa, &op, p, K, N, (strips + PACK_B_COLUMN_PARTS - 1) / PACK_B_COLUMN_PARTS};
    size_t kblocks = (K + p->kcb - 1) / p->kcb;
    onyx_parallel_for(onyx_pack_pool(pk), kblocks * PACK_B_COLUMN_PARTS, 1, pack_b_items, &j);
    return NULL;
}

/* float16 B (sgemm_half.h): the strips of packed_new's layout in 16 bits. */
static onyx_status *pack_b_half(const onyx_gemm_isa *isa, bool transB, size_t K, size_t N, const void *B, size_t ldb,
                                onyx_packed_mat **out) {
    ONYX_TRY(packed_new(isa, true, N, K, false, true, out));
    onyx_packed_mat *p = *out;
    for (size_t pc = 0; pc < K && p->kcb; pc += p->kcb) {
        size_t kc = K - pc < p->kcb ? K - pc : p->kcb;
        onyx_half_pack_b_block(B, ldb, transB, pc, kc, 0, N, isa->nr, p->half + pc * p->padded);
    }
    return NULL;
}

onyx_status *onyx_sgemm_pack_b_half(const onyx_pack_ctx *pk, bool transB, size_t K, size_t N, const void *B,
                                    size_t ldb, onyx_packed_mat **out) {
    *out = NULL;
    size_t n, bytes;
    if (onyx_mul_overflow_size(K, N, &n) || onyx_mul_overflow_size(n, sizeof(float), &bytes) ||
        bytes > ONYX_MAX_TENSOR_BYTES)
        return ONYX_INVALID_ARG("gemm: float16 matrix of %zu x %zu too large to pack", K, N);
    if (pk && pk->bf16 && onyx_bf16_fastmath_available()) {
        /* bf16 fast-math rounds the weights to bfloat16: through float32 once */
        float *wide = onyx_alloc(bytes ? bytes : sizeof(float));
        if (!wide) return ONYX_OOM();
        onyx_half_widen_bytes(B, n, wide);
        onyx_status *st = pack_b_bf16(pk, transB, K, N, wide, ldb, out);
        onyx_free(wide);
        return st;
    }
    return pack_b_half(current_isa(), transB, K, N, B, ldb, out);
}

onyx_status *onyx_sgemm_pack_a(bool transA, size_t M, size_t K, const float *A, size_t lda,
                               onyx_packed_mat **out) {
    const onyx_gemm_isa *isa = current_isa();
    ONYX_TRY(packed_new(isa, false, M, K, true, false, out));
    onyx_packed_mat *p = *out;
    for (size_t pc = 0; pc < K; pc += p->kcb) {
        size_t kc = K - pc < p->kcb ? K - pc : p->kcb;
        float *block = p->data + pc * p->padded;
        for (size_t i = 0; i < M; i += isa->mr) {
            size_t mr = M - i < isa->mr ? M - i : isa->mr;
            pack_a_panel(isa, A, lda, transA, i, mr, pc, kc, block + (i / isa->mr) * kc * isa->mr);
        }
    }
    return NULL;
}

void onyx_packed_mat_free(onyx_packed_mat *p) {
    if (!p) return;
    onyx_bf16_mat_free(p->bf16);
    onyx_free(p->half);
    onyx_free(p->data);
    free(p);
}

size_t onyx_packed_mat_bytes(const onyx_packed_mat *p) { return p ? p->bytes : 0; }

bool onyx_sgemm_post_runs(size_t K, float alpha, const onyx_packed_mat *Bp) {
    return K && alpha != 0.0f && !(Bp && Bp->bf16);
}

/* ---- the driver ---- */

typedef struct gemm_job {
    const onyx_gemm_isa *isa;
    size_t M, N, K, kcb, nc_block;
    float alpha, beta;
    const onyx_gemm_operand *A, *B;
    float *C;
    size_t ldc;
    const onyx_gemm_epilogue *ep;
    size_t nt_m, nt_n;        /* tile grid */
    size_t panels, strips;    /* M in MR panels, N in NR strips */
    bool a_shared;            /* A packed once for all tiles (share_a) */
    atomic_bool failed;       /* a task could not get its buffers */
} gemm_job;

/* Prefetch cursor over the packed B block that a tile uses next: its lines
 * are handed to the kernel calls of the current block a few at a time. */
typedef struct b_prefetch {
    const char *p;
    size_t lines, per_call;
} b_prefetch;

/* Buffers of one task. */
typedef struct gemm_bufs {
    float *a;       /* an A block: a_panels panels of MR x KC */
    float *b;       /* KC x NC block in strips */
} gemm_bufs;

/* A panels per block (see onyx_gemm_isa.a_panels). */
static size_t a_block_panels(const onyx_gemm_isa *isa) { return isa->a_panels ? isa->a_panels : 1; }

/* K steps per run_block call: on an ISA that slices K (strip_k), each strip
 * slice stays in L1 while all the block's panels (up to STRIP_PANELS with A
 * packed for the call) pass it; else the whole K block. Every call slices
 * the same way, however many rows it has and however A reaches the kernel:
 * a slice ends with C stored and the next one adds to it, which rounds
 * differently from one sum over the block, and a row of C must come out bit
 * for bit the same in any batch (test_gemm's test_invariance). */
static size_t k_slice(const gemm_job *job, size_t panels, size_t kc) {
    (void)panels;
    size_t sk = job->isa->strip_k;
    return sk && kc > sk ? sk : kc;
}

/* The micro-kernel over the packed A panels of rows [ic, ic1) (ablock, kc
 * x MR each) and a block of B strips: strip outer, panels inner, so each
 * strip is read from L1 by all the panels. With several panels, the next
 * packed strip is prefetched into L2 a slice per kernel call (by the
 * driver before the call, or where the ISA says so by the kernel during
 * it): the first panel to use it would otherwise wait for L3 once per
 * cache line. Not
 * inlined: run_tile calls it per K slice, and inlined there it cost the
 * minimal library (which compiles this file) a 4 KiB step. */
__attribute__((noinline)) static void run_block(const gemm_job *job, const float *ablock, const float *bblock,
                                                size_t strip_stride, size_t ldb_k, size_t ic, size_t ic1, size_t jc,
                                                size_t nc, size_t pc, size_t kc, size_t a_stride, b_prefetch *pf) {
    const onyx_gemm_isa *isa = job->isa;
    const onyx_gemm_epilogue *ep = job->ep;
    const size_t MR = isa->mr, NR = isa->nr;
    /* ep->post (GELU) is not in the micro-kernels' store: the driver runs
     * it (with a column bias, so the kernels keep their plain inline store)
     * over the finished block right after, in rows of up to NC while the
     * block is in L2 (per tile or per strip, the short loops cost more than
     * the second pass over C they save) */
    const bool post = ep && ep->post && pc + kc == job->K;
    onyx_gemm_kargs ka = {
        .kc = kc, .ldb = ldb_k, .ldc = job->ldc,
        .alpha = job->alpha,
        .beta = pc ? 1.0f : job->beta,
        .load_c = pc > 0 || job->beta != 0.0f,
        .last = pc + kc == job->K,
        .act = ep ? (int)ep->act : 0,
        .act_a = ep ? ep->act_a : 0.0f,
        .act_b = ep ? ep->act_b : 0.0f,
    };
    size_t panels = div_up(ic1 - ic, MR);
    size_t lines = panels > 1 && ldb_k == NR ? kc * NR * sizeof(float) / 64 : 0;
    size_t lines_per_call = div_up(lines, panels);
    for (size_t jr = 0; jr < nc; jr += NR) {
        ka.b = bblock + (jr / NR) * strip_stride;
        ka.nr = nc - jr < NR ? nc - jr : NR;
        if (ep && ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_COL && !post) ka.bias_col = ep->bias + jc + jr;
        const char *next = jr + NR < nc ? (const char *)(ka.b + strip_stride) : NULL;
        size_t line = 0;
        for (size_t ir = ic; ir < ic1; ir += MR) {
            /* this call's share of the next strip */
            const char *share = NULL;
            size_t share_lines = 0;
            if (next && line < lines) {
                share = next + line * 64;
                share_lines = lines - line < lines_per_call ? lines - line : lines_per_call;
                line += share_lines;
            }
            if (!isa->strip_pf)
                for (size_t e = 0; e < share_lines; e++) __builtin_prefetch(share + e * 64, 0, 2);
            ka.a = ablock + (ir - ic) / MR * a_stride;
            ka.c = job->C + ir * job->ldc + jc + jr;
            ka.mr = ic1 - ir < MR ? ic1 - ir : MR;
            if (ep && ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_ROW) ka.bias_row = ep->bias + ir;
            ka.pf = pf->p;
            ka.pf_lines = pf->lines < pf->per_call ? pf->lines : pf->per_call;
            if (ka.pf_lines) {   /* an empty cursor's p is NULL: no arithmetic on it (UBSan) */
                pf->p += ka.pf_lines * 64;
                pf->lines -= ka.pf_lines;
            }
            if (isa->strip_pf) {
                ka.pf = share;
                ka.pf_lines = share_lines;
            }
            isa->kernel(&ka);
        }
    }
    if (post)
        ep->post(ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_COL ? ep->bias + jc : NULL,
                 job->C + ic * job->ldc + jc, job->ldc, ic1 - ic, nc);
}

/* The packed B block after (jc, pc) in run_tile's order (K blocks inner)
 * as a prefetch cursor spread over the current block's kernel calls
 * (kernel steps / 2 lines per call at most), or an empty one. */
static b_prefetch next_b_block(const gemm_job *job, size_t m0, size_t m1, size_t n1, size_t jc, size_t nc,
                               size_t pc, size_t kc) {
    const onyx_packed_mat *pb = job->B->packed;
    b_prefetch pf = {0};
    if (!pb || (!pb->data && !pb->half)) return pf;
    const size_t NR = job->isa->nr;
    size_t npc = pc + kc, njc = jc;
    if (npc >= job->K) {
        npc = 0;
        njc = jc + nc;
        if (njc >= n1) return pf;
    }
    size_t nkc = job->K - npc < job->kcb ? job->K - npc : job->kcb;
    size_t nnc = n1 - njc < job->nc_block ? n1 - njc : job->nc_block;
    size_t first = npc * pb->padded + (njc / NR) * nkc * NR, elems = div_up(nnc, NR) * nkc * NR;
    size_t esize = pb->half ? sizeof(uint16_t) : sizeof(float);
    pf.p = pb->half ? (const char *)(pb->half + first) : (const char *)(pb->data + first);
    pf.lines = elems * esize / 64;
    size_t panels = div_up(m1 - m0, job->isa->mr), ks = k_slice(job, panels, kc);
    pf.per_call = div_up(pf.lines, panels * div_up(nc, NR) * div_up(kc, ks));
    if (pf.per_call > ks / 2) pf.per_call = ks / 2;
    return pf;
}

static void run_tile(const gemm_job *job, size_t m0, size_t m1, size_t n0, size_t n1,
                     const gemm_bufs *buf) {
    const onyx_gemm_isa *isa = job->isa;
    const onyx_gemm_operand *A = job->A, *B = job->B;
    const size_t MR = isa->mr, NR = isa->nr;
    /* A tile of a single panel uses each B element once: read B in place. */
    const bool b_direct = B->data && !B->trans && m1 - m0 <= MR;
    for (size_t jc = n0; jc < n1; jc += job->nc_block) {
        size_t nc = n1 - jc < job->nc_block ? n1 - jc : job->nc_block;
        for (size_t pc = 0; pc < job->K; pc += job->kcb) {
            size_t kc = job->K - pc < job->kcb ? job->K - pc : job->kcb;
            const float *bblock;
            size_t strip_stride, ldb_k;
            if (B->packed && B->packed->half) {
                /* float16 weights: this block's strips widened once for all the tile's rows */
                onyx_half_widen(B->packed->half + pc * B->packed->padded + (jc / NR) * kc * NR,
                                div_up(nc, NR) * kc * NR, buf->b);
                bblock = buf->b;
                strip_stride = kc * NR;
                ldb_k = NR;
            } else if (B->packed) {
                bblock = B->packed->data + pc * B->packed->padded + (jc / NR) * kc * NR;
                strip_stride = kc * NR;
                ldb_k = NR;
            } else if (b_direct) {
                bblock = B->data + pc * B->ld + jc;
                strip_stride = NR;
                ldb_k = B->ld;
            } else {
                /* one cache line between strips: packing writes a row across
                 * all strips, and strips a multiple of 4 KiB apart would
                 * all compete for the same L1 set */
                strip_stride = kc * NR + STRIP_GAP;
                pack_b_block(isa, B, pc, kc, jc, nc, buf->b, strip_stride);
                bblock = buf->b;
                ldb_k = NR;
            }
            const size_t mc = (A->packed && isa->strip_k ? STRIP_PANELS : a_block_panels(isa)) * MR;
            b_prefetch pf = next_b_block(job, m0, m1, n1, jc, nc, pc, kc);
            for (size_t ic = m0; ic < m1; ic += mc) {
                size_t ic1 = m1 - ic < mc ? m1 : ic + mc;
                const float *ablock;
                if (A->packed) {
                    ablock = A->packed->data + pc * A->packed->padded + (ic / MR) * kc * MR;
                } else {
                    for (size_t ir = ic; ir < ic1; ir += MR)
                        pack_a_panel(isa, A->data, A->ld, A->trans, ir, m1 - ir < MR ? m1 - ir : MR, pc, kc,
                                     buf->a + (ir - ic) / MR * kc * MR);
                    ablock = buf->a;
                }
                size_t ks = k_slice(job, div_up(ic1 - ic, MR), kc);
                for (size_t k0 = 0; k0 < kc; k0 += ks)
                    run_block(job, ablock + k0 * MR, bblock + k0 * ldb_k, strip_stride, ldb_k, ic, ic1, jc, nc,
                              pc + k0, kc - k0 < ks ? kc - k0 : ks, kc * MR, &pf);
            }
        }
    }
}

/* Split [0, units) into `parts` near-equal ranges; range t in units. */
static void split_range(size_t units, size_t parts, size_t t, size_t *begin, size_t *end) {
    *begin = units * t / parts;
    *end = units * (t + 1) / parts;
}

/* Packing buffers are kept per thread (a GEMM per operator would
 * otherwise map and fault in half a megabyte each time) and freed when the
 * thread exits. */
#define SCRATCH_SLOTS 5
#define SHARED_A_SLOT 4   /* the GEMM drivers' own: the A packed once per call (share_a) */
#define SCRATCH_MAX_BYTES ((size_t)16 << 20)   /* larger requests go to the heap each time */

typedef struct scratch {
    float *data[SCRATCH_SLOTS];
    size_t floats[SCRATCH_SLOTS];
} scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_key_ok;

static void scratch_free(void *p) {
    scratch *s = p;
    if (!s) return;
    for (int i = 0; i < SCRATCH_SLOTS; i++) onyx_free(s->data[i]);
    free(s);
}

static void scratch_init(void) { scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0; }

/* This thread's scratch slot of at least `floats` floats, or NULL. */
static float *thread_scratch(int slot, size_t floats) {
    pthread_once(&scratch_once, scratch_init);
    if (!scratch_key_ok) return NULL;
    scratch *s = pthread_getspecific(scratch_key);
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return NULL;
        if (pthread_setspecific(scratch_key, s) != 0) {
            free(s);
            return NULL;
        }
    }
    if (s->floats[slot] < floats) {
        onyx_free(s->data[slot]);
        s->floats[slot] = 0;
        if (!(s->data[slot] = onyx_alloc(floats * sizeof(float)))) return NULL;
        s->floats[slot] = floats;
    }
    return s->data[slot];
}

float *onyx_scratch_acquire(int slot, size_t floats, bool *heap) {
    *heap = slot < 1 || slot >= SHARED_A_SLOT || floats > SCRATCH_MAX_BYTES / sizeof(float);
    if (!*heap) return thread_scratch(slot, floats ? floats : 1);
    if (floats > ONYX_MAX_TENSOR_BYTES / sizeof(float)) return NULL;
    return onyx_alloc((floats ? floats : 1) * sizeof(float));
}

void onyx_scratch_release(float *p, bool heap) {
    if (heap) onyx_free(p);
}

float *onyx_gemm_scratch(bool shared_a, size_t floats) {
    return thread_scratch(shared_a ? SHARED_A_SLOT : 0, floats ? floats : 1);
}

static void run_tiles(void *arg, size_t begin, size_t end) {
    gemm_job *job = arg;
    const onyx_gemm_isa *isa = job->isa;
    /* 16 floats (64 bytes) between the parts keep each one aligned */
    size_t a_n = (a_block_panels(isa) * isa->mr * job->kcb + 15) / 16 * 16;
    size_t b_n = (job->kcb * isa->nr + STRIP_GAP) * div_up(job->nc_block, isa->nr);
    float *base = thread_scratch(0, a_n + b_n);
    gemm_bufs buf = {.a = base, .b = base + a_n};
    if (!base) {
        atomic_store(&job->failed, true);
    } else {
        for (size_t t = begin; t < end; t++) {
            size_t pm0, pm1, sn0, sn1;
            split_range(job->panels, job->nt_m, t / job->nt_n, &pm0, &pm1);
            split_range(job->strips, job->nt_n, t % job->nt_n, &sn0, &sn1);
            size_t m0 = pm0 * isa->mr, m1 = pm1 * isa->mr;
            size_t n0 = sn0 * isa->nr, n1 = sn1 * isa->nr;
            if (m1 > job->M) m1 = job->M;
            if (n1 > job->N) n1 = job->N;
            if (m0 < m1 && n0 < n1) run_tile(job, m0, m1, n0, n1, &buf);
        }
    }
}

/* Estimated cycles of a tile of C (rows x cols): the FMAs (16 lanes, the
 * columns rounded up to whole vectors) plus the packing it does itself: its
 * part of B once, its rows of A once per NC block. */
static double tile_cost(const gemm_job *job, size_t rows, size_t cols) {
    double k = (double)job->K, cost = (double)rows * (double)div_up(cols, 16) * k;
    /* cycles per packed element: a copy, a transpose, a generated row */
    double b_elem = job->B->row_fn ? 1.5 : job->B->trans || job->B->block_fn ? 0.5 : 0.3;
    if (!job->B->packed) cost += b_elem * k * (double)cols;
    else if (job->B->packed->half) cost += 0.1 * k * (double)cols;   /* widening the float16 blocks */
    /* packed weights come from memory, once per tile that reads them: two
     * tiles of the same columns read them twice (splitting M at M = 128) */
    if (job->B->packed) cost += 0.25 * k * (double)cols;
    if (!job->A->packed && !job->a_shared) cost += 0.3 * k * (double)rows * (double)div_up(cols, job->nc_block);
    return cost + 2000.0;   /* task overhead */
}

/* Expected finishing time of a grid: the tiles go, in order, to whichever
 * thread is free first (what the pool's shared counter does), plus half
 * the largest tile for the chance that a thread starts its last tile late
 * (preempted, or slowed by the other thread's memory traffic): many small
 * tiles balance, few large ones do not. */
static double grid_makespan(const gemm_job *job, size_t nt_m, size_t nt_n, int threads) {
    double load[64] = {0}, largest = 0;
    for (size_t t = 0; t < nt_m * nt_n; t++) {
        size_t p0, p1, s0, s1;
        split_range(job->panels, nt_m, t / nt_n, &p0, &p1);
        split_range(job->strips, nt_n, t % nt_n, &s0, &s1);
        size_t m1 = p1 * job->isa->mr, n1 = s1 * job->isa->nr;
        size_t rows = (m1 < job->M ? m1 : job->M) - p0 * job->isa->mr;
        size_t cols = (n1 < job->N ? n1 : job->N) - s0 * job->isa->nr;
        int best = 0;
        for (int i = 1; i < threads; i++)
            if (load[i] < load[best]) best = i;
        double c = tile_cost(job, rows, cols);
        load[best] += c;
        if (c > largest) largest = c;
    }
    double span = 0;
    for (int i = 0; i < threads; i++)
        if (load[i] > span) span = load[i];
    return span + 0.5 * largest;
}

/* Tile grid for the threads: the split (at most four tasks per thread)
 * that the cost model expects to finish first. Splitting N costs A
 * repacking, splitting M costs B repacking, narrow edge strips make
 * uneven tiles; the model weighs all three. */
static void plan_tiles(gemm_job *job, int threads) {
    job->panels = div_up(job->M, job->isa->mr);
    job->strips = div_up(job->N, job->isa->nr);
    job->nt_m = job->nt_n = 1;
    double work = (double)job->M * (double)job->N * (double)job->K;
    if (threads <= 1 || work < MIN_PARALLEL_WORK) return;
    if (threads > 64) threads = 64;
    double best = grid_makespan(job, 1, 1, threads);
    /* candidates: 1..4 tasks per thread in every factorisation, or one
     * task per panel and strip when there are fewer than threads */
    size_t counts[5] = {(size_t)threads, 2 * (size_t)threads, 3 * (size_t)threads, 4 * (size_t)threads,
                        job->panels * job->strips};
    for (int c = 0; c < 5; c++) {
        size_t tiles = counts[c];
        if (c == 4 && tiles >= (size_t)threads) break;
        for (size_t nt_n = 1; nt_n <= tiles && nt_n <= job->strips; nt_n++) {
            size_t nt_m = tiles / nt_n;
            if (tiles % nt_n || nt_m > job->panels) continue;
            double t = grid_makespan(job, nt_m, nt_n, threads);
            if (t < best * 0.999) {
                best = t;
                job->nt_m = nt_m;
                job->nt_n = nt_n;
            }
        }
    }
}

/* ---- A packed once per call ----
 * A tile packs its rows of A once per NC block, and every tile column
 * packs them again: 99 times over for a 128 x 768 A against the 50257
 * columns of a language-model head. When A is small enough, all of it is
 * packed once (the threads share the panels, read-only) and the tile grid
 * is then free to give each thread a contiguous range of columns. This is
 * the driver's one mechanism for it: a single-panel A (decoding, M = 1) is
 * shared too once its columns span several NC blocks. */
#define SHARED_A_MAX_FLOATS ((size_t)2 << 20)   /* 8 MiB, kept per calling thread */

static size_t padded_rows(const gemm_job *job) { return div_up(job->M, job->isa->mr) * job->isa->mr; }

static bool share_a_wanted(const gemm_job *job, int threads) {
    if (!job->A->data) return false;   /* packed already */
    /* one NC block: each tile packs its rows once anyway, and with one
     * panel (or one thread) no other tile packs them again */
    if (job->N <= job->nc_block && (threads <= 1 || job->M <= job->isa->mr)) return false;
    return padded_rows(job) <= SHARED_A_MAX_FLOATS / job->K;
}

typedef struct share_a_job {
    const gemm_job *job;
    float *dst;
    size_t panels;
} share_a_job;

/* Items are (K block, panel) pairs, in the layout of onyx_sgemm_pack_a. */
static void share_a_items(void *arg, size_t begin, size_t end) {
    const share_a_job *s = arg;
    const gemm_job *job = s->job;
    const size_t MR = job->isa->mr;
    for (size_t it = begin; it < end; it++) {
        size_t pc = it / s->panels * job->kcb, i = it % s->panels * MR;
        size_t kc = job->K - pc < job->kcb ? job->K - pc : job->kcb;
        size_t mr = job->M - i < MR ? job->M - i : MR;
        pack_a_panel(job->isa, job->A->data, job->A->ld, job->A->trans, i, mr, pc, kc,
                     s->dst + pc * padded_rows(job) + i * kc);
    }
}

/* Packs A into *mat (this thread's scratch) and points *op at it; false
 * (nothing changed) when the buffer cannot be had: tiles then pack A. The
 * threads pack a multi-panel A together; one panel is the caller's (a
 * pool hand-off costs more than packing it). */
static bool share_a(gemm_job *job, onyx_threadpool *tp, bool parallel, onyx_packed_mat *mat,
                    onyx_gemm_operand *op) {
    float *buf = thread_scratch(SHARED_A_SLOT, padded_rows(job) * job->K);
    if (!buf) return false;
    share_a_job s = {job, buf, div_up(job->M, job->isa->mr)};
    size_t items = div_up(job->K, job->kcb) * s.panels;
    if (parallel && s.panels > 1) onyx_parallel_for(tp, items, 1, share_a_items, &s);
    else share_a_items(&s, 0, items);
    *mat = (onyx_packed_mat){.isa = job->isa, .outer = job->M, .K = job->K, .padded = padded_rows(job),
                             .kcb = job->kcb, .data = buf};
    *op = (onyx_gemm_operand){.packed = mat};
    job->A = op;
    return true;
}

/* C = epilogue(beta * C) for the degenerate K == 0 or alpha == 0 case. */
static void scale_only(size_t M, size_t N, float beta, float *C, size_t ldc,
                       const onyx_gemm_epilogue *ep) {
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        for (size_t j = 0; j < N; j++) {
            float x = beta == 0.0f ? 0.0f : beta * c[j];
            if (ep && ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_ROW) x += ep->bias[i];
            if (ep && ep->bias && ep->bias_kind == ONYX_GEMM_BIAS_COL) x += ep->bias[j];
            if (ep) x = onyx_gemm_act_scalar(x, (int)ep->act, ep->act_a, ep->act_b);
            c[j] = x;
        }
    }
}

static int operand_kinds(const onyx_gemm_operand *op) {
    return (op->data != NULL) + (op->packed != NULL) + (op->row_fn != NULL) + (op->block_fn != NULL);
}

static onyx_status *check_operands(size_t M, size_t N, size_t K, const onyx_gemm_operand *A,
                                   const onyx_gemm_operand *B, const onyx_gemm_isa **isa) {
    if (!A || !B || operand_kinds(A) != 1 || operand_kinds(B) != 1 || A->row_fn || A->block_fn)
        return ONYX_INVALID_ARG("gemm: each operand needs exactly one of data, packed, row_fn or block_fn "
                                "(the last two only for B)");
    *isa = current_isa();
    if (A->packed) {
        if (A->packed->is_b || A->packed->outer != M || A->packed->K != K)
            return ONYX_INVALID_ARG("gemm: packed A is %zu x %zu, expected %zu x %zu",
                                    A->packed->outer, A->packed->K, M, K);
        *isa = A->packed->isa;
    }
    if (B->packed) {
        if (!B->packed->is_b || B->packed->outer != N || B->packed->K != K)
            return ONYX_INVALID_ARG("gemm: packed B is %zu x %zu, expected %zu x %zu",
                                    B->packed->K, B->packed->outer, K, N);
        if (A->packed && A->packed->isa != B->packed->isa)
            return ONYX_INVALID_ARG("gemm: operands packed for different kernels");
        *isa = B->packed->isa;
    }
    return NULL;
}

onyx_status *onyx_sgemm_ex(size_t M, size_t N, size_t K, float alpha, const onyx_gemm_operand *A,
                           const onyx_gemm_operand *B, float beta, float *C, size_t ldc,
                           const onyx_gemm_epilogue *ep, onyx_threadpool *tp) {
    const onyx_gemm_isa *isa = NULL;
    ONYX_TRY(check_operands(M, N, K, A, B, &isa));
    if (M == 0 || N == 0) return NULL;
    if (K == 0 || alpha == 0.0f) {
        scale_only(M, N, beta, C, ldc, ep);
        return NULL;
    }
    if (B->packed && B->packed->bf16) {
        if (!A->data) return ONYX_INVALID_ARG("gemm: a bfloat16-packed B needs a plain A");
        return onyx_bf16_gemm(NULL, M, alpha, A->data, A->ld, A->trans, B->packed->bf16, beta, C, ldc, ep, tp);
    }
    gemm_job job = {
        .isa = isa, .M = M, .N = N, .K = K, .kcb = k_block(K), .nc_block = n_block(isa),
        .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C, .ldc = ldc, .ep = ep,
    };
    atomic_init(&job.failed, false);
    int threads = onyx_threadpool_threads(tp);
    job.a_shared = share_a_wanted(&job, threads);
    plan_tiles(&job, threads);
    size_t tiles = job.nt_m * job.nt_n;
    onyx_packed_mat a_mat;
    onyx_gemm_operand a_op;
    if (job.a_shared) job.a_shared = share_a(&job, tp, tiles > 1, &a_mat, &a_op);
    if (tiles == 1) run_tiles(&job, 0, 1);
    else onyx_parallel_for(tp, tiles, 1, run_tiles, &job);
    return atomic_load(&job.failed) ? ONYX_OOM() : NULL;
}

onyx_status *onyx_sgemm(bool transA, bool transB, size_t M, size_t N, size_t K, float alpha,
                        const float *A, size_t lda, const float *B, size_t ldb, float beta,
                        float *C, size_t ldc, onyx_threadpool *tp) {
    static const float dummy = 0.0f;   /* A/B are not read when K == 0 */
    onyx_gemm_operand a = {.data = A ? A : &dummy, .ld = lda, .trans = transA};
    onyx_gemm_operand b = {.data = B ? B : &dummy, .ld = ldb, .trans = transB};
    return onyx_sgemm_ex(M, N, K, alpha, &a, &b, beta, C, ldc, NULL, tp);
}

onyx_status *onyx_sgemm_packed(bool transA, size_t M, float alpha, const float *A, size_t lda,
                               const onyx_packed_mat *Bp, float beta, float *C, size_t ldc,
                               const onyx_gemm_epilogue *ep, onyx_threadpool *tp) {
    if (!Bp) return ONYX_INVALID_ARG("gemm: no packed B");
    static const float dummy = 0.0f;
    onyx_gemm_operand a = {.data = A ? A : &dummy, .ld = lda, .trans = transA};
    onyx_gemm_operand b = {.packed = Bp};
    return onyx_sgemm_ex(M, Bp->outer, Bp->K, alpha, &a, &b, beta, C, ldc, ep, tp);
}
