/* MatMulNBits micro-kernels (kernels/contrib/nbits.h): every ISA kernel this
 * CPU can run, including the ones the dispatch table does not pick here
 * (the VPMADDUBSW int8 path of CPUs without VNNI), against the portable
 * kernels on random blocks of 4- and 8-bit weights of every block size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernels/contrib/nbits.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

typedef struct data {
    onyx_nbits_gemv g;
    uint8_t *b;
    float *sc, *zp, *a, *asum, *ascale, *aqsum;
    int8_t *aq;
} data;

static void make(data *d, int bits, size_t blk, size_t kb, size_t n) {
    size_t blob = blk * (size_t)bits / 8, kp = kb * blk;
    d->b = malloc(n * kb * blob);
    d->sc = malloc(n * kb * sizeof(float));
    d->zp = malloc(n * kb * sizeof(float));
    d->a = malloc(kp * sizeof(float));
    d->aq = malloc(kp);
    d->asum = malloc(kb * sizeof(float));
    d->ascale = malloc(kb * sizeof(float));
    d->aqsum = malloc(kb * sizeof(float));
    for (size_t i = 0; i < n * kb * blob; i++) d->b[i] = (uint8_t)testlib_rand_u64();
    for (size_t i = 0; i < n * kb; i++) {
        d->sc[i] = 0.01f + 0.05f * (testlib_frand() + 1);
        d->zp[i] = (float)(testlib_rand_u64() % (bits == 4 ? 16 : 256));
    }
    for (size_t i = 0; i < kp; i++) {
        d->a[i] = testlib_frand();
        d->aq[i] = (int8_t)(testlib_rand_u64() % 255 - 127);
    }
    for (size_t b = 0; b < kb; b++) {
        float s = 0;
        int32_t qs = 0;
        for (size_t t = 0; t < blk; t++) {
            s += d->a[b * blk + t];
            qs += d->aq[b * blk + t];
        }
        d->asum[b] = s;
        d->ascale[b] = 0.01f * (float)(b + 1);
        d->aqsum[b] = d->ascale[b] * (float)qs;
    }
    d->g = (onyx_nbits_gemv){.bits = bits, .blk = blk, .k_blocks = kb, .blob = blob, .b = d->b, .scales = d->sc,
                             .zp = d->zp, .n = n, .a = d->a, .asum = d->asum, .aq = d->aq, .ascale = d->ascale,
                             .aqsum = d->aqsum};
}

static void release(data *d) {
    free(d->b), free(d->sc), free(d->zp), free(d->a), free(d->aq), free(d->asum), free(d->ascale), free(d->aqsum);
}

/* fold: fn takes 4-bit float A folded (onyx_nbits_isa.fold_a). */
static int compare(onyx_nbits_gemv_fn ref, onyx_nbits_gemv_fn fn, data *d, bool fold, const char *what) {
    size_t n = d->g.n, kp = d->g.k_blocks * d->g.blk;
    float *y0 = malloc(n * sizeof(float)), *y1 = malloc(n * sizeof(float)), *af = malloc(kp * sizeof(float));
    memcpy(af, d->a, kp * sizeof(float));
    if (fold && d->g.bits == 4) onyx_nbits_fold_a(af, kp, d->g.blk);
    onyx_nbits_gemv g = d->g;
    g.y = y0;
    ref(&g);
    g.y = y1;
    g.a = af;
    fn(&g);
    free(af);
    int bad = 0;
    for (size_t j = 0; j < n; j++)
        if (fabsf(y0[j] - y1[j]) > 1e-4f * (1 + fabsf(y0[j]))) {
            if (!bad)
                fprintf(stderr, "%s bits %d blk %zu: y[%zu] = %g, portable kernel %g\n", what, g.bits, g.blk, j,
                        (double)y1[j], (double)y0[j]);
            bad = 1;
        }
    free(y0);
    free(y1);
    return bad;
}

/* Dequantised rows (prefill): fn against the definition (element k of a
 * 4-bit block is the low nibble of byte k / 2 when k is even, else the
 * high one), bit for bit; ldw wider than the row to catch overruns. */
static int compare_dequant(onyx_nbits_dequant_fn fn, const data *d, const char *what) {
    const onyx_nbits_gemv *g = &d->g;
    size_t kp = g->k_blocks * g->blk, ldw = kp + 5;
    float *w = malloc(g->n * ldw * sizeof(float));
    for (size_t i = 0; i < g->n * ldw; i++) w[i] = -1234.0f;
    fn(g, w, ldw);
    int bad = 0;
    for (size_t j = 0; j < g->n && !bad; j++)
        for (size_t k = 0; k < ldw && !bad; k++) {
            size_t b = k / g->blk, t = k % g->blk;
            const uint8_t *q = g->b + (j * g->k_blocks + b) * g->blob;
            float want = -1234.0f;
            if (k < kp) {
                int v = g->bits == 8 ? q[t] : t & 1 ? q[t / 2] >> 4 : q[t / 2] & 15;
                want = ((float)v - g->zp[j * g->k_blocks + b]) * g->scales[j * g->k_blocks + b];
            }
            if (w[j * ldw + k] != want) {
                fprintf(stderr, "%s dequant bits %d blk %zu: w[%zu][%zu] = %g, expected %g\n", what, g->bits, g->blk,
                        j, k, (double)w[j * ldw + k], (double)want);
                bad = 1;
            }
        }
    free(w);
    return bad;
}

/* Weights packed into SGEMM strips (pack_b): rows [p0, p0 + kc), columns
 * [j0, j0 + nc) of the block against the definition, bit for bit, strips
 * of nr columns `strip` floats apart (a gap past kc * nr that must stay
 * untouched), the last strip's padding zero. */
static int compare_pack(onyx_nbits_pack_fn fn, const data *d, size_t p0, size_t kc, size_t j0, size_t nc, size_t nr,
                        const char *what) {
    const onyx_nbits_gemv *g = &d->g;
    size_t strips = (nc + nr - 1) / nr, strip = kc * nr + 3, total = strips * strip;
    float *dst = malloc(total * sizeof(float));
    for (size_t i = 0; i < total; i++) dst[i] = -1234.0f;
    fn(g, p0, kc, j0, nc, nr, dst, strip);
    int bad = 0;
    for (size_t i = 0; i < total && !bad; i++) {
        size_t s = i / strip, e = i % strip, p = e / nr, jj = s * nr + e % nr;
        float want = -1234.0f;
        if (e < kc * nr && jj < nc) {
            size_t k = p0 + p, b = k / g->blk, t = k % g->blk, j = j0 + jj;
            const uint8_t *q = g->b + (j * g->k_blocks + b) * g->blob;
            int v = g->bits == 8 ? q[t] : t & 1 ? q[t / 2] >> 4 : q[t / 2] & 15;
            want = ((float)v - g->zp[j * g->k_blocks + b]) * g->scales[j * g->k_blocks + b];
        } else if (e < kc * nr) {
            want = 0.0f;   /* padding of the last strip */
        }
        if (dst[i] != want) {
            fprintf(stderr, "%s pack_b bits %d blk %zu rows %zu+%zu cols %zu+%zu nr %zu: strip %zu elem %zu = %g, "
                            "expected %g\n", what, g->bits, g->blk, p0, kc, j0, nc, nr, s, e, (double)dst[i],
                    (double)want);
            bad = 1;
        }
    }
    free(dst);
    return bad;
}

/* Float32 rows streamed (f32_rows): fn against a double-precision sum for
 * k rows (4 at a time and a remainder) and n columns (vectors and a tail),
 * B with a row stride wider than n; y starts nonzero (the kernels add). */
static int compare_f32_rows(onyx_f32_rows_fn fn, size_t k, size_t n, const char *what) {
    size_t ldb = n + 3;
    float *a = malloc(k * sizeof(float)), *B = malloc(k * ldb * sizeof(float)), *y = malloc(n * sizeof(float));
    for (size_t i = 0; i < k; i++) a[i] = testlib_frand();
    for (size_t i = 0; i < k * ldb; i++) B[i] = testlib_frand();
    for (size_t j = 0; j < n; j++) y[j] = (float)j * 0.25f;
    fn(a, B, ldb, k, n, y);
    int bad = 0;
    for (size_t j = 0; j < n && !bad; j++) {
        double want = (double)j * 0.25, mag = fabs(want);
        for (size_t t = 0; t < k; t++) want += (double)a[t] * B[t * ldb + j], mag += fabs((double)a[t] * B[t * ldb + j]);
        if (fabs(y[j] - want) > 1e-5 * (mag + 1)) {
            fprintf(stderr, "%s f32_rows k %zu n %zu: y[%zu] = %g, expected %g\n", what, k, n, j, (double)y[j], want);
            bad = 1;
        }
    }
    free(a), free(B), free(y);
    return bad;
}

/* The prefill kernel (nbits.h) against the portable dequantisation and a
 * double-precision product: kb blocks (several K slices of 256 when kb * blk
 * is large), n columns (a partial group of 8), mv rows; ct starts at 1 and
 * must be added to; its rows past n must stay zero sums (start 0, end 0). */
static int compare_prefill(onyx_nbits_prefill_fn fn, const data *d, size_t mv, const char *what) {
    const onyx_nbits_gemv *g = &d->g;
    size_t kp = g->k_blocks * g->blk, n8 = (g->n + 7) / 8 * 8, ldct = mv + 16;
    float *w = malloc(g->n * kp * sizeof(float)), *at = malloc(kp * mv * sizeof(float));
    float *ct = malloc(n8 * ldct * sizeof(float));
    for (size_t i = 0; i < kp * mv; i++) at[i] = testlib_frand();
    /* element (m, k) of A in the kernel's blocks of 48 rows */
#define AT(m, k) at[(m) / 48 * 48 * kp + (k) * (mv - (m) / 48 * 48 < 48 ? mv - (m) / 48 * 48 : 48) + (m) % 48]
    for (size_t c = 0; c < n8; c++)
        for (size_t m = 0; m < ldct; m++) ct[c * ldct + m] = c < g->n ? 1.0f : 0.0f;
    onyx_nbits_isa_generic.dequant(g, w, kp);
    fn(g, at, mv, ct, ldct);
    int bad = 0;
    for (size_t c = 0; c < n8 && !bad; c++)
        for (size_t m = 0; m < ldct && !bad; m++) {
            double want = c < g->n ? 1.0 : 0.0, mag = 1.0;
            if (c < g->n && m < mv)
                for (size_t k = 0; k < kp; k++) {
                    double p = (double)w[c * kp + k] * AT(m, k);
                    want += p, mag += fabs(p);
                }
            if (fabs(ct[c * ldct + m] - want) > 1e-5 * mag) {
                fprintf(stderr, "%s prefill bits %d blk %zu kb %zu n %zu mv %zu: ct[%zu][%zu] = %g, expected %g\n",
                        what, g->bits, g->blk, g->k_blocks, g->n, mv, c, m, (double)ct[c * ldct + m], want);
                bad = 1;
            }
        }
#undef AT
    free(w), free(at), free(ct);
    return bad;
}

/* The ISA's transposition of A for prefill against the layout's definition
 * (nbits.h: 48-row blocks, element (m, k) at k * wb + m - m0), over all of K
 * in one call and in two ranges, bit for bit. */
static int compare_transpose(onyx_nbits_transpose_fn fn, size_t M, size_t K, const char *what) {
    size_t mp = (M + 15) & ~(size_t)15, kp = (K + 31) & ~(size_t)31, kb = (K + 15) / 16;
    float *A = malloc(M * K * sizeof *A), *want = calloc(mp * kp, sizeof *want), *got = calloc(mp * kp, sizeof *got);
    for (size_t i = 0; i < M * K; i++) A[i] = (float)(i % 1013) - 500.5f;
    for (size_t m = 0; m < M; m++) {
        size_t b0 = m / 48 * 48, wb = mp - b0 < 48 ? mp - b0 : 48;
        for (size_t k = 0; k < K; k++) want[b0 * kp + k * wb + m - b0] = A[m * K + k];
    }
    int bad = 0;
    for (int split = 0; split < 2; split++) {
        memset(got, 0xff, mp * kp * sizeof *got);   /* the caller zeroes at: the kernel leaves padding alone */
        for (size_t m = 0; m < mp; m++)
            for (size_t k = 0; k < kp; k++) {
                size_t b0 = m / 48 * 48, wb = mp - b0 < 48 ? mp - b0 : 48;
                if (m >= M || k >= K) got[b0 * kp + k * wb + m - b0] = 0.0f;
            }
        size_t mid = split ? kb / 2 : kb;
        fn(A, M, K, kp, mp, 0, mid, got);
        fn(A, M, K, kp, mp, mid, kb, got);
        if (memcmp(want, got, mp * kp * sizeof *got)) {
            fprintf(stderr, "%s transpose_a M %zu K %zu split %d: differs\n", what, M, K, split);
            bad++;
        }
    }
    free(A), free(want), free(got);
    return bad;
}

int main(void) {
    const onyx_nbits_isa *gen = &onyx_nbits_isa_generic;
    const onyx_nbits_isa *isas[2] = {0};
    onyx_cpu_isa ids[2] = {ONYX_CPU_GENERIC, ONYX_CPU_GENERIC};
    int n_isa = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (onyx_cpu_detected() >= ONYX_CPU_AVX2) isas[n_isa] = &onyx_nbits_isa_avx2, ids[n_isa++] = ONYX_CPU_AVX2;
    if (onyx_cpu_detected() >= ONYX_CPU_AVX512) isas[n_isa] = &onyx_nbits_isa_avx512, ids[n_isa++] = ONYX_CPU_AVX512;
#endif
    int runs = 0;
    for (int bits = 4; bits <= 8; bits += 4)
        for (size_t blk = 16; blk <= 256; blk *= 2) {
            data d;
            make(&d, bits, blk, 3, 13);
            CHECK(!compare_dequant(gen->dequant, &d, gen->name));
            for (int i = 0; i < n_isa; i++) {
                CHECK(!compare(gen->gemv_f32, isas[i]->gemv_f32, &d, isas[i]->fold_a, isas[i]->name));
                CHECK(!compare(gen->gemv_i8, isas[i]->gemv_i8, &d, false, isas[i]->name));
                if (isas[i]->gemv_vnni && onyx_cpu_has_vnni(ids[i]))
                    CHECK(!compare(gen->gemv_i8, isas[i]->gemv_vnni, &d, false, isas[i]->name));
                CHECK(!compare_dequant(isas[i]->dequant, &d, isas[i]->name));
                runs++;
            }
            release(&d);
            /* 11 blocks: the vector loops over blocks (8 at a time; the VNNI kernel's 64-byte steps) and their tails */
            make(&d, bits, blk, 11, 5);
            for (int i = 0; i < n_isa; i++) {
                CHECK(!compare(gen->gemv_f32, isas[i]->gemv_f32, &d, isas[i]->fold_a, isas[i]->name));
                CHECK(!compare(gen->gemv_i8, isas[i]->gemv_i8, &d, false, isas[i]->name));
                if (isas[i]->gemv_vnni && onyx_cpu_has_vnni(ids[i]))
                    CHECK(!compare(gen->gemv_i8, isas[i]->gemv_vnni, &d, false, isas[i]->name));
            }
            release(&d);
        }
    /* prefill: K of 1 to 3 slices of 256, partial column groups, 16 to 80 rows */
    static const size_t pf_kb[] = {1, 3, 24}, pf_n[] = {5, 8, 19}, pf_mv[] = {16, 32, 48, 80, 96, 112};
    for (size_t blk = 16; blk <= 256; blk *= 4)
        for (int bits = 4; bits <= 8; bits += 4)
            for (size_t a = 0; a < 3; a++) {
                data d;
                make(&d, bits, blk, pf_kb[a] * (blk == 256 ? 1 : 64 / blk), pf_n[a]);
                for (int i = 0; i < n_isa; i++)
                    if (isas[i]->prefill)
                        for (size_t m = 0; m < 6; m++) CHECK(!compare_prefill(isas[i]->prefill, &d, pf_mv[m], isas[i]->name));
                release(&d);
            }
    /* A transposed for prefill: rows in part of a 16-row tile or a 48-row
     * block, K in part of a 16-column tile */
    static const size_t tr[][2] = {{1, 5}, {4, 16}, {17, 40}, {48, 33}, {100, 300}, {128, 64}, {200, 17}};
    for (int i = 0; i < n_isa; i++)
        if (isas[i]->transpose_a)
            for (size_t c = 0; c < sizeof tr / sizeof tr[0]; c++)
                CHECK(!compare_transpose(isas[i]->transpose_a, tr[c][0], tr[c][1], isas[i]->name));
    /* pack_b: aligned and unaligned row ranges (one block, across blocks, the
     * tail of K), whole and partial groups of 8 columns, strips of 16 (the
     * AVX2 engine's) and 6 columns (no whole groups); whole blocks of 32 and more (AVX2's 4-bit
     * fast path: 0 + 128 is every block of K at 32, 64 and 128, 32 + 64 two blocks of 32) */
    static const size_t pk_rows[][2] = {{0, 48}, {0, 17}, {5, 40}, {16, 32}, {3, 1}, {33, 63}, {1, 95},
                                        {0, 128}, {32, 64}};
    static const size_t pk_cols[][2] = {{0, 16}, {0, 13}, {2, 11}, {8, 5}, {0, 3}};
    for (size_t blk = 16; blk <= 256; blk *= 2)
        for (int bits = 4; bits <= 8; bits += 4) {
            data d;
            make(&d, bits, blk, 96 / blk + 1, 16);
            for (size_t r = 0; r < sizeof pk_rows / sizeof pk_rows[0]; r++)
                for (size_t c = 0; c < 5 && pk_rows[r][0] + pk_rows[r][1] <= d.g.k_blocks * blk; c++)
                    for (size_t nr = 6; nr <= 16; nr += 10) {
                        CHECK(!compare_pack(gen->pack_b, &d, pk_rows[r][0], pk_rows[r][1], pk_cols[c][0], pk_cols[c][1],
                                            nr, gen->name));
                        for (int i = 0; i < n_isa; i++)
                            if (isas[i]->pack_b)
                                CHECK(!compare_pack(isas[i]->pack_b, &d, pk_rows[r][0], pk_rows[r][1], pk_cols[c][0],
                                                    pk_cols[c][1], nr, isas[i]->name));
                    }
            release(&d);
        }
    static const size_t rows_k[] = {1, 3, 4, 9, 64}, rows_n[] = {1, 7, 16, 37, 300};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++) {
            CHECK(!compare_f32_rows(gen->f32_rows, rows_k[a], rows_n[b], gen->name));
            for (int i = 0; i < n_isa; i++) CHECK(!compare_f32_rows(isas[i]->f32_rows, rows_k[a], rows_n[b], isas[i]->name));
        }
    printf("test_nbits: %d kernel sets compared on %d ISA tables\n", runs, n_isa);
    return testlib_finish("test_nbits");
}
