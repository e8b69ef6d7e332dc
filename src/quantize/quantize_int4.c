/* --mode int4: every selected MatMul whose B is a constant float matrix
 * [K, N] becomes com.microsoft MatMulNBits (bits 4) with B quantised per
 * block of block_size values along K, round to nearest as ONNX Runtime's
 * default 4-bit quantiser does:
 *
 *   symmetric   scale = (the block's value of largest magnitude) / -8,
 *               zero point 8 (implied: no zero_points input)
 *   asymmetric  range [min(x, 0), max(x, 0)], scale = range / 15,
 *               zero point round(-min / scale) clamped to [0, 15], stored
 *               packed (two per byte, low nibble first)
 *   q = clamp(round(x / scale + zero point), 0, 15)
 *
 * --bits 8 writes 8-bit blocks instead (zero point 128, 255 levels).
 * --scale-search replaces round to nearest's range by the shrunk one of
 * least squared error per block (nbits_search); --lm-head-bits 8 writes the
 * MatMul that produces a graph output (the language-model head) with 8-bit
 * blocks whatever --bits says.
 *
 * K need not be a multiple of the block: the last block is padded with
 * zeros. B is written as (N, k_blocks, block_size / 2) bytes, element 2t of a
 * block in the low nibble of byte t; scales as (N, k_blocks). The float
 * weight stays in the graph only if something else reads it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/graph_edit.h"
#include "quantize/quantize.h"

typedef struct int4_weights {
    onyx_value *b, *scales, *zp;   /* zp NULL when symmetric */
} int4_weights;

static void int4_free(int4_weights *w) {
    onyx_value_free(w->b);
    onyx_value_free(w->scales);
    onyx_value_free(w->zp);
}

/* How one block is quantised: bits 4 or 8 (levels 2^bits - 1, implied
 * symmetric zero point 2^(bits - 1)). */
typedef struct nbits_fmt {
    int bits;
    bool symmetric, search;
} nbits_fmt;

/* Squared error of x[0..n) quantised with (sc, z), and the codes (NULL: only
 * the error). */
static double nbits_codes(const float *x, size_t n, size_t blk, float sc, float z, float top, uint8_t *codes) {
    float inv = sc != 0.0f ? 1.0f / sc : 0.0f;
    double err = 0;
    for (size_t t = 0; t < blk; t++) {
        float v = t < n ? x[t] : 0.0f;
        float q = roundf(v * inv + z);
        q = q < 0 ? 0 : q > top ? top : q;
        float d = (q - z) * sc - v;
        err += (double)d * d;
        if (codes) codes[t] = (uint8_t)q;
    }
    return err;
}

/* The round-to-nearest scale and zero point of ONNX Runtime's default
 * quantiser for a block with extremes lo <= 0 <= hi and the value `big` of
 * largest magnitude. */
static void nbits_rtn(const nbits_fmt *f, float lo, float hi, float big, float *sc, float *z) {
    float top = (float)((1 << f->bits) - 1), mid = (float)(1 << (f->bits - 1));
    if (f->symmetric) {
        *sc = big / -mid;
        *z = mid;
    } else {
        *sc = (hi - lo) / top;
        float zf = *sc != 0.0f ? -lo / *sc : lo;
        *z = zf < 0 ? 0 : zf > top ? top : roundf(zf);
    }
}

/* Scale search: round to nearest clips nothing but spends levels on the one
 * extreme value; a slightly smaller range (clipping that value) often has
 * less total error. Tries the range shrunk by 0% to 30% in 16 steps and
 * keeps the scale and zero point of least squared error (the RTN ones
 * when nothing beats them). */
#define NBITS_SEARCH_STEPS 16

static void nbits_search(const nbits_fmt *f, const float *x, size_t n, size_t blk, float lo, float hi, float big,
                         float *sc, float *z) {
    float top = (float)((1 << f->bits) - 1);
    double best = nbits_codes(x, n, blk, *sc, *z, top, NULL);
    for (int i = 1; i < NBITS_SEARCH_STEPS; i++) {
        float shrink = 1.0f - 0.3f * (float)i / (NBITS_SEARCH_STEPS - 1), s2, z2;
        nbits_rtn(f, lo * shrink, hi * shrink, big * shrink, &s2, &z2);
        double e = nbits_codes(x, n, blk, s2, z2, top, NULL);
        if (e < best) {
            best = e;
            *sc = s2;
            *z = z2;
        }
    }
}

/* One block x[0..n) (n <= blk, the rest counts as zeros) into blob bytes:
 * 4 bits two per byte, low nibble first; 8 bits one per byte. */
static void nbits_block(const nbits_fmt *f, const float *x, size_t n, size_t blk, uint8_t *blob, float *scale,
                        uint8_t *zp) {
    float lo = 0, hi = 0, big = 0;
    for (size_t t = 0; t < n; t++) {
        lo = fminf(lo, x[t]);
        hi = fmaxf(hi, x[t]);
        if (fabsf(x[t]) > fabsf(big)) big = x[t];
    }
    float sc, z, top = (float)((1 << f->bits) - 1);
    nbits_rtn(f, lo, hi, big, &sc, &z);
    if (f->search) nbits_search(f, x, n, blk, lo, hi, big, &sc, &z);
    uint8_t codes[4096];   /* blk <= 4096 (the CLI's bound, checked by the driver) */
    nbits_codes(x, n, blk, sc, z, top, codes);
    if (f->bits == 8) {
        memcpy(blob, codes, blk);
    } else {
        memset(blob, 0, blk / 2);
        for (size_t t = 0; t < blk; t++) blob[t / 2] |= (uint8_t)(t & 1 ? codes[t] << 4 : codes[t]);
    }
    *scale = sc;
    *zp = (uint8_t)z;
}

#define INT4_COLS 64   /* columns gathered per pass: rows of W are read 256 contiguous bytes at a time */

/* Quantise W [K, N], INT4_COLS columns at a time. Zero points: 4 bits
 * packed two per byte (N, ceil(k_blocks / 2)), 8 bits (N, k_blocks). */
static onyx_status *int4_quantise(const onyx_value *w, int64_t blk, const nbits_fmt *f, int4_weights *out) {
    memset(out, 0, sizeof *out);
    int64_t K = w->dims[0], N = w->dims[1];
    int64_t kb = (K + blk - 1) / blk, blob = blk * f->bits / 8;
    int64_t bd[3] = {N, kb, blob}, sd[2] = {N, kb}, zd[2] = {N, f->bits == 8 ? kb : (kb + 1) / 2};
    ONYX_TRY(onyx_tensor_new(ONYX_UINT8, 3, bd, &out->b));
    onyx_status *st = onyx_tensor_new(ONYX_FLOAT, 2, sd, &out->scales);
    if (!st && !f->symmetric) st = onyx_tensor_new(ONYX_UINT8, 2, zd, &out->zp);
    float *cols = st ? NULL : malloc((size_t)K * INT4_COLS * sizeof *cols);
    if (!st && !cols) st = ONYX_OOM();
    if (st) {
        int4_free(out);
        return st;
    }
    const unsigned char *src = w->data;   /* a weight borrowed from the file may be misaligned: read with memcpy */
    float row[INT4_COLS];
    uint8_t *b = out->b->data, *z = out->zp ? out->zp->data : NULL;
    float *sc = out->scales->data;
    if (z) memset(z, 0, (size_t)(N * zd[1]));
    for (int64_t n0 = 0; n0 < N; n0 += INT4_COLS) {
        int64_t nc = N - n0 < INT4_COLS ? N - n0 : INT4_COLS;
        for (int64_t k = 0; k < K; k++) {
            memcpy(row, src + (size_t)(k * N + n0) * sizeof(float), (size_t)nc * sizeof(float));
            for (int64_t c = 0; c < nc; c++) cols[c * K + k] = row[c];
        }
        for (int64_t c = 0; c < nc; c++) {
            int64_t n = n0 + c;
            for (int64_t i = 0; i < kb; i++) {
                int64_t len = K - i * blk < blk ? K - i * blk : blk;
                uint8_t zp;
                nbits_block(f, cols + c * K + i * blk, (size_t)len, (size_t)blk, b + (n * kb + i) * blob,
                            &sc[n * kb + i], &zp);
                if (z && f->bits == 8) z[n * zd[1] + i] = zp;
                else if (z) z[n * zd[1] + i / 2] |= (uint8_t)(i & 1 ? zp << 4 : zp);
            }
        }
    }
    free(cols);
    return NULL;
}

static onyx_status *int4_rewrite(onyx_quant_job *job, uint32_t ni) {
    onyx_graph *g = job->graph;
    const onyx_quant_options *o = job->opt;
    int32_t a = g->nodes[ni].in[0], bw = g->nodes[ni].in[1], y = g->nodes[ni].out[0];
    const onyx_value *w = g->values[bw].constant;
    int64_t K = w->dims[0], N = w->dims[1];
    char base[400], name[512];
    snprintf(base, sizeof base, "%s", g->values[bw].name);
    /* the head (a MatMul writing a graph output) may keep 8 bits */
    nbits_fmt f = {g->values[y].is_output && o->lm_head_bits ? o->lm_head_bits : o->bits, o->symmetric,
                   o->scale_search};
    int4_weights q;
    ONYX_TRY(int4_quantise(w, o->block_size, &f, &q));
    int32_t ids[4] = {a, -1, -1, -1};
    const char *suffix[3] = {f.bits == 8 ? "_Q8" : "_Q4", "_scales", "_zero_points"};
    onyx_value **vals[3] = {&q.b, &q.scales, &q.zp};
    onyx_status *st = NULL;
    for (int i = 0; i < 3 && !st; i++) {
        if (!*vals[i]) continue;
        snprintf(name, sizeof name, "%s%s", base, suffix[i]);
        st = onyx_graph_new_constant(g, name, *vals[i], &ids[1 + i]);   /* owns the value, also on failure */
        *vals[i] = NULL;
    }
    int4_free(&q);
    ONYX_TRY(st);
    snprintf(name, sizeof name, "%s_Q4", g->nodes[ni].name[0] ? g->nodes[ni].name : g->values[y].name);
    onyx_graph_remove_node(g, ni);   /* frees y for the new node */
    uint32_t idx;
    size_t n_attrs = o->accuracy_level ? 5 : 4;
    ONYX_TRY(onyx_graph_new_node(g, "MatMulNBits", "com.microsoft", 1, name, ids, ids[3] >= 0 ? 4 : 3, &y, 1, n_attrs,
                                 &idx));
    onyx_node *nd = &g->nodes[idx];
    onyx_graph_set_attr_int(g, nd, 0, "K", K);
    onyx_graph_set_attr_int(g, nd, 1, "N", N);
    onyx_graph_set_attr_int(g, nd, 2, "bits", f.bits);
    onyx_graph_set_attr_int(g, nd, 3, "block_size", o->block_size);
    if (o->accuracy_level) onyx_graph_set_attr_int(g, nd, 4, "accuracy_level", o->accuracy_level);
    job->quantized++;
    return NULL;
}

static bool int4_float_matrix(const onyx_graph *g, int32_t v) {
    if (v < 0 || g->values[v].source != ONYX_VAL_INITIALIZER) return false;
    const onyx_value *c = g->values[v].constant;
    return c && c->kind == ONYX_VALUE_TENSOR && c->dtype == ONYX_FLOAT && c->rank == 2 && c->numel > 0;
}

onyx_status *onyx_quantize_int4(onyx_quant_job *job) {
    onyx_graph *g = job->graph;
    size_t n = g->n_nodes;   /* the nodes added below are not revisited */
    for (size_t i = 0; i < n; i++) {
        const onyx_node *nd = &g->nodes[i];
        if (!onyx_quant_node_selected(job->opt, nd)) continue;
        if (strcmp(nd->op_type, "MatMul") != 0 || nd->n_in != 2 || nd->n_out != 1 || nd->in[0] < 0) continue;
        if (!int4_float_matrix(g, nd->in[1])) continue;
        ONYX_TRY(int4_rewrite(job, (uint32_t)i));
    }
    return NULL;
}
