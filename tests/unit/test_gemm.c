/* SGEMM engine: every micro-kernel the CPU runs against a naive double
 * reference on many odd sizes, transposes, alpha/beta, pre-packed operands,
 * generated rows and epilogues. `test_gemm bench` also prints GFLOP/s
 * (never asserted on). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/threadpool.h"
#include "core/value.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

static double now_s(void);

static float *rand_buf(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = testlib_frand();
    return p;
}

typedef struct problem {
    bool ta, tb;
    size_t M, N, K, lda, ldb, ldc;
    float alpha, beta;
    const float *A, *B;
    onyx_gemm_epilogue ep;   /* bias_kind NONE and act NONE = plain */
} problem;

static float act_ref(float x, const onyx_gemm_epilogue *ep) {
    switch (ep->act) {
    case ONYX_GEMM_ACT_RELU: return x < 0 ? 0 : x;
    case ONYX_GEMM_ACT_CLIP: return x < ep->act_a ? ep->act_a : (x > ep->act_b ? ep->act_b : x);
    case ONYX_GEMM_ACT_LEAKY_RELU: return x < 0 ? ep->act_a * x : x;
    default: break;
    }
    if (ep->post == onyx_gemm_post_gelu) return (float)(0.5 * x * (1.0 + erf(x / sqrt(2.0))));
    if (ep->post == onyx_gemm_post_fast_gelu)
        return (float)(0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * (double)x * x * x))));
    return x;
}

/* Checks C against the reference computed from C0 (C's contents before). */
static bool check_result(const problem *p, const float *C0, const float *C, const char *what) {
    for (size_t i = 0; i < p->M; i++) {
        for (size_t j = 0; j < p->N; j++) {
            double acc = 0, mag = 0;
            for (size_t k = 0; k < p->K; k++) {
                double a = p->ta ? p->A[k * p->lda + i] : p->A[i * p->lda + k];
                double b = p->tb ? p->B[j * p->ldb + k] : p->B[k * p->ldb + j];
                acc += a * b;
                mag += fabs(a * b);
            }
            double ref = p->alpha * acc;
            mag *= fabs(p->alpha);
            if (p->beta != 0) {
                ref += p->beta * C0[i * p->ldc + j];
                mag += fabs(p->beta * C0[i * p->ldc + j]);
            }
            if (p->ep.bias_kind == ONYX_GEMM_BIAS_ROW) ref += p->ep.bias[i];
            if (p->ep.bias_kind == ONYX_GEMM_BIAS_COL) ref += p->ep.bias[j];
            ref = act_ref((float)ref, &p->ep);
            double got = C[i * p->ldc + j];
            if (!(fabs(got - ref) <= 1e-5 * mag + 1e-5)) {
                fprintf(stderr, "%s: M=%zu N=%zu K=%zu ta=%d tb=%d alpha=%g beta=%g: C[%zu,%zu] = %g, "
                        "expected %g\n", what, p->M, p->N, p->K, p->ta, p->tb, p->alpha, p->beta, i, j,
                        got, ref);
                return false;
            }
        }
        /* padding between rows must be untouched */
        for (size_t j = p->N; j < p->ldc && i + 1 < p->M; j++) {
            if (memcmp(&C[i * p->ldc + j], &C0[i * p->ldc + j], sizeof(float)) != 0) {
                fprintf(stderr, "%s: wrote C padding at [%zu,%zu]\n", what, i, j);
                return false;
            }
        }
    }
    return true;
}

/* C0 for a run: NaN when beta == 0 (C must not be read), random otherwise. */
static float *make_c(const problem *p) {
    size_t n = p->M ? (p->M - 1) * p->ldc + p->N : 0;
    float *c = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) c[i] = p->beta == 0 ? NAN : testlib_frand();
    return c;
}

/* Rows of op(B) generated on demand, to test the row_fn operand. */
static void gen_row(const void *ctx, size_t k, size_t n0, size_t nc, onyx_gemm_row_out *out) {
    const problem *p = ctx;
    if (p->tb) onyx_gemm_row_put_strided(out, p->B + n0 * p->ldb + k, p->ldb, nc);
    else if (nc > 2) {   /* exercise the zero and put helpers too */
        onyx_gemm_row_put(out, p->B + k * p->ldb + n0, nc - 1);
        if (p->B[k * p->ldb + n0 + nc - 1] == 0.0f) onyx_gemm_row_zero(out, 1);
        else onyx_gemm_row_put(out, p->B + k * p->ldb + n0 + nc - 1, 1);
    } else onyx_gemm_row_put(out, p->B + k * p->ldb + n0, nc);
}

enum { MODE_PLAIN, MODE_PACK_B, MODE_PACK_A, MODE_PACK_AB, MODE_ROWS, MODE_COUNT };
static const char *const mode_names[] = {"plain", "packed B", "packed A", "packed A+B", "row_fn"};

static bool run_problem(const problem *p, int mode, onyx_threadpool *tp) {
    float *C0 = make_c(p);
    size_t n = p->M ? (p->M - 1) * p->ldc + p->N : 0;
    float *C = malloc((n ? n : 1) * sizeof(float));
    memcpy(C, C0, n * sizeof(float));
    onyx_gemm_operand a = {.data = p->A, .ld = p->lda, .trans = p->ta};
    onyx_gemm_operand b = {.data = p->B, .ld = p->ldb, .trans = p->tb};
    onyx_packed_mat *pa = NULL, *pb = NULL;
    bool ok = true;
    if (mode == MODE_PACK_A || mode == MODE_PACK_AB) {
        CHECK_OK(onyx_sgemm_pack_a(p->ta, p->M, p->K, p->A, p->lda, &pa));
        a = (onyx_gemm_operand){.packed = pa};
    }
    if (mode == MODE_PACK_B || mode == MODE_PACK_AB) {
        /* packed on the pool's threads, as during session creation */
        const onyx_pack_ctx pk = {.pool = tp};
        CHECK_OK(onyx_sgemm_pack_b(&pk, p->tb, p->K, p->N, p->B, p->ldb, &pb));
        b = (onyx_gemm_operand){.packed = pb};
    }
    if (mode == MODE_ROWS) b = (onyx_gemm_operand){.row_fn = gen_row, .row_ctx = p};
    bool plain_ep = p->ep.bias_kind == ONYX_GEMM_BIAS_NONE && p->ep.act == ONYX_GEMM_ACT_NONE && !p->ep.post;
    onyx_status *st;
    if (mode == MODE_PLAIN && plain_ep)
        st = onyx_sgemm(p->ta, p->tb, p->M, p->N, p->K, p->alpha, p->A, p->lda, p->B, p->ldb,
                        p->beta, C, p->ldc, tp);
    else if (mode == MODE_PACK_B)
        st = onyx_sgemm_packed(p->ta, p->M, p->alpha, p->A, p->lda, pb, p->beta, C, p->ldc,
                               plain_ep ? NULL : &p->ep, tp);
    else
        st = onyx_sgemm_ex(p->M, p->N, p->K, p->alpha, &a, &b, p->beta, C, p->ldc, &p->ep, tp);
    /* where the driver runs no post pass, the caller runs it over C (gemm.h) */
    if (!st && p->ep.post && !onyx_sgemm_post_runs(p->K, p->alpha, pb)) p->ep.post(NULL, C, p->ldc, p->M, p->N);
    if (st) {
        fprintf(stderr, "%s: %s\n", mode_names[mode], onyx_status_message(st));
        onyx_status_free(st);
        ok = false;
    } else {
        ok = check_result(p, C0, C, mode_names[mode]);
    }
    onyx_packed_mat_free(pa);
    onyx_packed_mat_free(pb);
    free(C0);
    free(C);
    return ok;
}

/* One problem with random operands; ld padding varies with the size. */
static bool run_case(size_t M, size_t N, size_t K, bool ta, bool tb, float alpha, float beta,
                     int mode, const onyx_gemm_epilogue *ep, onyx_threadpool *tp) {
    problem p = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K, .alpha = alpha, .beta = beta};
    p.lda = (ta ? M : K) + (M % 3);
    p.ldb = (tb ? K : N) + (N % 2);
    p.ldc = N + (K % 4);
    if (p.lda == 0) p.lda = 1;
    if (p.ldb == 0) p.ldb = 1;
    float *A = rand_buf((ta ? K : M) * p.lda);
    float *B = rand_buf((tb ? N : K) * p.ldb);
    float *bias = rand_buf(M > N ? M : N);
    p.A = A;
    p.B = B;
    if (ep) {
        p.ep = *ep;
        p.ep.bias = p.ep.bias_kind ? bias : NULL;
    }
    bool ok = run_problem(&p, mode, tp);
    free(A);
    free(B);
    free(bias);
    return ok;
}

static const size_t odd_sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 23, 31, 32, 33,
                                   47, 48, 49, 63, 64, 65, 67};
#define N_ODD (sizeof odd_sizes / sizeof odd_sizes[0])

static void test_sizes(onyx_threadpool *tp) {
    static const float ab[][2] = {{1, 0}, {1, 1}, {0.5f, 0}, {-1.5f, 0.25f}};
    int failures = 0, cases = 0;
    for (size_t mi = 0; mi < N_ODD; mi++)
        for (size_t ni = 0; ni < N_ODD; ni++)
            for (size_t ki = 0; ki < N_ODD; ki += 1 + (mi + ni) % 3) {
                size_t M = odd_sizes[mi], N = odd_sizes[ni], K = odd_sizes[ki];
                unsigned v = (unsigned)(mi * 7 + ni * 3 + ki);
                bool ta = v & 1, tb = (v >> 1) & 1;
                const float *s = ab[(v >> 2) % 4];
                int mode = (int)((v / 3) % MODE_COUNT);
                cases++;
                if (!run_case(M, N, K, ta, tb, s[0], s[1], mode, NULL, tp) && failures++ > 5) goto done;
            }
done:
    CHECK(failures == 0);
    printf("  %s: %d size cases, %d failed\n", onyx_gemm_isa_name(), cases, failures);
}

/* Every mode and transpose on sizes that cross the K, M and N blocks. */
static void test_blocks(onyx_threadpool *tp) {
    /* 205 rows: more A panels than one block of them (onyx_gemm_isa.a_panels), a short last one;
     * 130 x 1100 x 600 and 41 x 1100 x 520: A packed once and shared (gemm.c, share_a: N over an
     * NC block, several K blocks); 3 x 1100 x 520 and 1 x 1030 x 300: the same for one panel */
    static const size_t shapes[][3] = {{24, 1000, 520}, {67, 530, 257}, {9, 1030, 513}, {130, 49, 300},
                                       {205, 70, 300}, {130, 1100, 600}, {41, 1100, 520}, {3, 1100, 520},
                                       {1, 1030, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int mode = 0; mode < MODE_COUNT; mode++)
            for (int t = 0; t < 4; t++)
                CHECK(run_case(shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1, 1.0f,
                               (t & 1) ? 0.5f : 0.0f, mode, NULL, tp));
}

/* A row of C must not depend on how many rows the call has or where the row
 * sits among them: a model server that batches requests, or a caller that
 * splits a batch, gets bit for bit what one request alone gets. So every tile
 * shape a row can land in (full panels, the last short panel, one row) must
 * sum K in the same order. Rows of one call are compared with the same rows
 * run alone and in small groups, plain and with B packed, 1 and 2 threads.
 * Likewise a column: with every column of B equal, every element of a row of
 * C must be equal, whichever column tile (whole or the last, short one) it is
 * in (the model zoo's light models have such layers and expect a softmax
 * over exactly equal logits). */
static void test_invariance(onyx_threadpool *tp) {
    /* N over one NC block (600): A packed once for the call even on one thread (share_a) */
    static const size_t shapes[][2] = {{10, 64}, {16, 300}, {33, 37}, {100, 530}, {512, 64}, {600, 300}};
    const size_t M = 37;
    int bad = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t N = shapes[s][0], K = shapes[s][1];
        float *A = rand_buf(M * K), *B = rand_buf(K * N);
        float *full = calloc(M * N, sizeof(float)), *part = calloc(M * N, sizeof(float));
        onyx_packed_mat *pb = NULL;
        const onyx_pack_ctx pk = {.pool = tp};
        CHECK_OK(onyx_sgemm_pack_b(&pk, false, K, N, B, N, &pb));
        for (int packed = 0; packed < 2 && pb; packed++) {
            CHECK_OK(packed ? onyx_sgemm_packed(false, M, 1.0f, A, K, pb, 0.0f, full, N, NULL, NULL)
                            : onyx_sgemm(false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, full, N, NULL));
            /* the whole call on the pool, then groups of 1, 2, 5 and 7 rows starting at every
             * offset, alone and on the pool */
            const size_t groups[] = {M, 1, 2, 5, 7};
            for (size_t g = 0; g < 5; g++)
                for (int threaded = 0; threaded < 2; threaded++) {
                    memset(part, 0, M * N * sizeof(float));
                    for (size_t r0 = 0; r0 < M; r0 += groups[g]) {
                        size_t m = M - r0 < groups[g] ? M - r0 : groups[g];
                        onyx_threadpool *pool = threaded ? tp : NULL;
                        CHECK_OK(packed ? onyx_sgemm_packed(false, m, 1.0f, A + r0 * K, K, pb, 0.0f,
                                                            part + r0 * N, N, NULL, pool)
                                        : onyx_sgemm(false, false, m, N, K, 1.0f, A + r0 * K, K, B, N,
                                                     0.0f, part + r0 * N, N, pool));
                    }
                    for (size_t r = 0; r < M; r++)
                        if (memcmp(full + r * N, part + r * N, N * sizeof(float)) != 0) {
                            if (bad++ < 5)
                                fprintf(stderr, "  %s: row %zu of %zu x %zu x %zu (%s, groups of %zu, %s) differs "
                                        "from the same row in one call\n", onyx_gemm_isa_name(), r, M, N, K,
                                        packed ? "packed B" : "plain", groups[g], threaded ? "pool" : "1 thread");
                            break;
                        }
                }
        }
        /* equal columns: B's first column copied into all of them */
        for (size_t k = 0; k < K; k++)
            for (size_t j = 1; j < N; j++) B[k * N + j] = B[k * N];
        for (int threaded = 0; threaded < 2; threaded++) {
            CHECK_OK(onyx_sgemm(false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, full, N, threaded ? tp : NULL));
            for (size_t r = 0; r < M; r++)
                for (size_t j = 1; j < N; j++)
                    if (memcmp(full + r * N + j, full + r * N, sizeof(float)) != 0) {
                        if (bad++ < 5)
                            fprintf(stderr, "  %s: %zu x %zu x %zu with equal columns: C[%zu][%zu] differs from "
                                    "C[%zu][0]\n", onyx_gemm_isa_name(), M, N, K, r, j, r);
                        j = N;
                        r = M;
                    }
        }
        onyx_packed_mat_free(pb);
        free(A);
        free(B);
        free(full);
        free(part);
    }
    CHECK(bad == 0);
}

static void test_epilogues(onyx_threadpool *tp) {
    static const onyx_gemm_epilogue eps[] = {
        {ONYX_GEMM_BIAS_ROW, NULL, ONYX_GEMM_ACT_NONE, 0, 0},
        {ONYX_GEMM_BIAS_COL, NULL, ONYX_GEMM_ACT_RELU, 0, 0},
        {ONYX_GEMM_BIAS_NONE, NULL, ONYX_GEMM_ACT_CLIP, -0.5f, 0.75f},
        {ONYX_GEMM_BIAS_ROW, NULL, ONYX_GEMM_ACT_LEAKY_RELU, 0.1f, 0},
        {ONYX_GEMM_BIAS_COL, NULL, ONYX_GEMM_ACT_RELU, 0, 0},
        {ONYX_GEMM_BIAS_COL, NULL, ONYX_GEMM_ACT_NONE, 0, 0, onyx_gemm_post_gelu},   /* the driver's pass */
        {ONYX_GEMM_BIAS_ROW, NULL, ONYX_GEMM_ACT_NONE, 0, 0, onyx_gemm_post_fast_gelu},
    };
    /* 40 x 100 x 700 with A packed: K blocks of 234 run in slices of 128 + 106 on
     * AVX-512 (strip_k), each slice storing C, the last one the epilogue */
    static const size_t shapes[][3] = {{1, 1, 1}, {7, 33, 5}, {17, 50, 300}, {64, 196, 576}, {3, 5, 0},
                                       {40, 100, 700}};
    for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int mode = 0; mode < MODE_COUNT; mode++)
                CHECK(run_case(shapes[s][0], shapes[s][1], shapes[s][2], s & 1, (s >> 1) & 1, 1.0f,
                               e == 4 ? 1.0f : 0.0f, mode, &eps[e], tp));
}

/* K == 0 and alpha == 0 only scale C (and never read A or B). */
static void test_degenerate(void) {
    float C[6] = {1, 2, 3, 4, 5, 6};
    CHECK_OK(onyx_sgemm(false, false, 2, 3, 0, 1.0f, NULL, 1, NULL, 1, 2.0f, C, 3, NULL));
    CHECK(C[0] == 2 && C[5] == 12);
    CHECK_OK(onyx_sgemm(false, false, 2, 3, 4, 0.0f, NULL, 4, NULL, 3, 0.0f, C, 3, NULL));
    CHECK(C[0] == 0 && C[5] == 0);
    CHECK_OK(onyx_sgemm(false, false, 0, 3, 4, 1.0f, NULL, 4, NULL, 3, 0.0f, NULL, 3, NULL));
}

static void test_errors(void) {
    float A[12] = {0}, B[12] = {0}, C[16] = {0};
    onyx_packed_mat *pb = NULL;
    CHECK_OK(onyx_sgemm_pack_b(NULL, false, 3, 4, B, 4, &pb));
    onyx_gemm_operand a = {.data = A, .ld = 4};
    onyx_gemm_operand b = {.packed = pb};
    /* K = 4 does not match the packed 3 x 4 */
    CHECK_ERR(onyx_sgemm_ex(2, 4, 4, 1.0f, &a, &b, 0.0f, C, 4, NULL, NULL), "packed B");
    onyx_gemm_operand none = {0};
    CHECK_ERR(onyx_sgemm_ex(2, 4, 3, 1.0f, &a, &none, 0.0f, C, 4, NULL, NULL), "exactly one");
    CHECK_ERR(onyx_sgemm_ex(2, 4, 3, 1.0f, &b, &b, 0.0f, C, 4, NULL, NULL), "packed A");
    CHECK_ERR(onyx_sgemm_packed(false, 2, 1.0f, A, 3, NULL, 0.0f, C, 4, NULL, NULL), "packed");
    CHECK(onyx_packed_mat_bytes(pb) >= 12 * sizeof(float));
    onyx_packed_mat_free(pb);
    CHECK(!onyx_cpu_force_isa("no-such-kernel"));
}

/* ------------------------------------------------------------ operator kernels */

/* Runs one operator through the CPU registry the way the executor does:
 * init with every input constant (when with_init), then compute. */
static onyx_status *run_op(const char *op, int opset, const onyx_attr_proto *attrs, size_t n_attrs,
                           const onyx_value **in, size_t n_in, onyx_value **out, bool with_init,
                           onyx_threadpool *tp) {
    *out = NULL;
    const onyx_op_def *def = onyx_cpu_find_kernel("", op, opset, in[0] ? in[0]->dtype : 0);
    if (!def) return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "no kernel for %s", op);
    int32_t ids_in[8] = {0}, ids_out[1] = {0};
    onyx_node node = {.name = "t", .op_type = op, .domain = "", .opset = opset, .n_in = n_in, .n_out = 1,
                      .in = ids_in, .out = ids_out, .n_attrs = n_attrs, .attrs = attrs, .provider = 0};
    void *state = NULL;
    if (with_init && def->init) {
        onyx_type types[8] = {{0}};
        const onyx_type *tps[8] = {NULL};
        for (size_t i = 0; i < n_in && i < 8; i++) {
            if (!in[i]) continue;
            types[i] = (onyx_type){.kind = ONYX_VALUE_TENSOR, .dtype = in[i]->dtype, .rank = in[i]->rank};
            memcpy(types[i].dims, in[i]->dims, sizeof types[i].dims);
            types[i].dims[0] = ONYX_DIM_SYMBOL_BASE;   /* a symbolic batch, as exported models have */
            tps[i] = &types[i];
        }
        onyx_kernel_info info = {.node = &node, .opset = opset, .n_in = n_in, .n_out = 1, .in_types = tps,
                                 .const_in = in};
        ONYX_TRY(def->init(&info, &state));
    }
    onyx_value *outs[1] = {NULL};
    bool used[1] = {true};
    onyx_kernel_ctx ctx = {.node = &node, .opset = opset, .n_in = n_in, .n_out = 1, .in = in, .out = outs,
                           .out_used = used, .state = state, .tp = tp};
    onyx_status *st = def->compute(&ctx);
    if (def->free_state) def->free_state(state);
    if (st) onyx_value_destroy(outs[0]);
    else *out = outs[0];
    return st;
}

static onyx_attr_proto attr_int(const char *name, int64_t v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_INT, .i = v};
}
static onyx_attr_proto attr_ints(const char *name, const int64_t *v, size_t n) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_INTS, .ints = (int64_t *)v, .n_ints = n};
}
static onyx_attr_proto attr_float(const char *name, float v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_FLOAT, .f = v};
}
static onyx_attr_proto attr_str(const char *name, const char *v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_STRING,
                             .s = {.ptr = (const uint8_t *)v, .len = strlen(v)}};
}

static onyx_value *rand_tensor(int rank, const int64_t *dims) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_new(ONYX_FLOAT, rank, dims, &v));
    for (int64_t i = 0; v && i < v->numel; i++) ((float *)v->data)[i] = testlib_frand();
    return v;
}

static bool close_to(const onyx_value *y, const double *ref, int64_t n, const char *what) {
    if (!y || y->numel != n) {
        fprintf(stderr, "%s: output has %lld elements, expected %lld\n", what, y ? (long long)y->numel : -1LL,
                (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double got = ((const float *)y->data)[i];
        if (!(fabs(got - ref[i]) <= 1e-4 * (1 + fabs(ref[i])))) {
            fprintf(stderr, "%s: element %lld = %g, expected %g\n", what, (long long)i, got, ref[i]);
            return false;
        }
    }
    return true;
}

/* A convolution case: explicit pads (pb, pe), or auto_pad when set. */
typedef struct conv_case {
    int nd;
    int64_t N, C, M, G;
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], opad[3];
    const char *auto_pad;
    bool bias;
} conv_case;

/* Output size and effective start pads of a case. */
static void conv_case_out(const conv_case *c, bool transpose, int64_t *out, int64_t *pb) {
    for (int i = 0; i < c->nd; i++) {
        int64_t dk = (c->k[i] - 1) * c->d[i] + 1;
        pb[i] = c->pb[i];
        if (transpose) {
            out[i] = c->s[i] * (c->in[i] - 1) + c->opad[i] + dk - c->pb[i] - c->pe[i];
        } else if (c->auto_pad) {
            out[i] = (c->in[i] + c->s[i] - 1) / c->s[i];
            int64_t total = (out[i] - 1) * c->s[i] + dk - c->in[i];
            if (total < 0) total = 0;
            pb[i] = strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        } else {
            out[i] = (c->in[i] + c->pb[i] + c->pe[i] - dk) / c->s[i] + 1;
        }
    }
}

/* Naive N-d (transposed) convolution in double. */
static void conv_reference(const conv_case *c, bool transpose, const float *x, const float *w, const float *b,
                           double *y) {
    int64_t out[3], pb[3], osz = 1, isz = 1, ksz = 1;
    conv_case_out(c, transpose, out, pb);
    for (int i = 0; i < c->nd; i++) {
        osz *= out[i];
        isz *= c->in[i];
        ksz *= c->k[i];
    }
    int64_t Cg = c->C / c->G, Mg = c->M / c->G;
    for (int64_t i = 0; i < c->N * c->M * osz; i++) y[i] = b ? b[(i / osz) % c->M] : 0.0;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t ci = 0; ci < c->C; ci++)
            for (int64_t mi = 0; mi < Mg; mi++) {
                int64_t g = ci / Cg, m = g * Mg + mi;
                const float *wk = transpose ? w + (ci * Mg + mi) * ksz : w + (m * Cg + ci % Cg) * ksz;
                for (int64_t ip = 0; ip < isz; ip++)
                    for (int64_t q = 0; q < ksz; q++) {
                        /* input position ip meets kernel tap q at output position op */
                        int64_t op = 0, rem_i = ip, rem_q = q, scale = 1;
                        bool ok = true;
                        for (int dd = c->nd - 1; dd >= 0; dd--) {
                            int64_t iv = rem_i % c->in[dd], kv = rem_q % c->k[dd];
                            rem_i /= c->in[dd];
                            rem_q /= c->k[dd];
                            int64_t o;
                            if (transpose) {
                                o = iv * c->s[dd] + kv * c->d[dd] - pb[dd];
                            } else {
                                int64_t t = iv + pb[dd] - kv * c->d[dd];
                                ok &= t >= 0 && t % c->s[dd] == 0;
                                o = t / c->s[dd];
                            }
                            ok &= o >= 0 && o < out[dd];
                            op += o * scale;
                            scale *= out[dd];
                        }
                        if (ok) y[(n * c->M + m) * osz + op] += (double)x[(n * c->C + ci) * isz + ip] * wk[q];
                    }
            }
}

static bool run_conv_case(const conv_case *c, bool transpose, bool with_init, onyx_threadpool *tp) {
    int64_t xd[5] = {c->N, c->C}, wd[5] = {transpose ? c->C : c->M, transpose ? c->M / c->G : c->C / c->G};
    int64_t pads[6], out[3], pb[3], osz = 1;
    for (int i = 0; i < c->nd; i++) {
        xd[2 + i] = c->in[i];
        wd[2 + i] = c->k[i];
        pads[i] = c->pb[i];
        pads[c->nd + i] = c->pe[i];
    }
    conv_case_out(c, transpose, out, pb);
    for (int i = 0; i < c->nd; i++) osz *= out[i];
    onyx_value *x = rand_tensor(c->nd + 2, xd), *w = rand_tensor(c->nd + 2, wd), *b = rand_tensor(1, &c->M);
    onyx_attr_proto attrs[8];
    size_t na = 0;
    attrs[na++] = attr_int("group", c->G);
    attrs[na++] = attr_ints("strides", c->s, (size_t)c->nd);
    attrs[na++] = attr_ints("dilations", c->d, (size_t)c->nd);
    if (c->auto_pad) attrs[na++] = attr_str("auto_pad", c->auto_pad);
    else attrs[na++] = attr_ints("pads", pads, 2 * (size_t)c->nd);
    if (transpose) attrs[na++] = attr_ints("output_padding", c->opad, (size_t)c->nd);
    const onyx_value *in[3] = {x, w, c->bias ? b : NULL};
    onyx_value *y = NULL;
    double *ref = malloc((size_t)(c->N * c->M * osz) * sizeof(double));
    conv_reference(c, transpose, x->data, w->data, c->bias ? b->data : NULL, ref);
    onyx_status *st = run_op(transpose ? "ConvTranspose" : "Conv", 17, attrs, na, in, 3, &y, with_init, tp);
    bool ok = st == NULL && close_to(y, ref, c->N * c->M * osz, transpose ? "ConvTranspose" : "Conv");
    if (st) {
        fprintf(stderr, "conv case: %s\n", onyx_status_message(st));
        onyx_status_free(st);
    }
    if (!ok)
        fprintf(stderr, "  case nd=%d N=%lld C=%lld M=%lld G=%lld in0=%lld k0=%lld s0=%lld d0=%lld pads0=%lld,%lld %s\n",
                c->nd, (long long)c->N, (long long)c->C, (long long)c->M, (long long)c->G, (long long)c->in[0],
                (long long)c->k[0], (long long)c->s[0], (long long)c->d[0], (long long)c->pb[0],
                (long long)c->pe[0], c->auto_pad ? c->auto_pad : "");
    free(ref);
    onyx_value_destroy(x);
    onyx_value_destroy(w);
    onyx_value_destroy(b);
    onyx_value_destroy(y);
    return ok;
}

static int64_t rnd(int64_t lo, int64_t hi) { return lo + (int64_t)((testlib_frand() + 1.0f) * 0.5f * (float)(hi - lo + 1)) % (hi - lo + 1); }

/* Random convolutions of every kind against the naive reference. */
static void test_conv_random(onyx_threadpool *tp) {
    int failures = 0;
    for (int t = 0; t < 300 && failures < 5; t++) {
        conv_case c = {.nd = 1 + t % 3, .N = rnd(1, 2), .bias = t % 4 != 0};
        c.G = t % 5 == 0 ? rnd(2, 3) : 1;
        c.C = c.G * rnd(1, 4);
        c.M = c.G * rnd(1, 5);
        if (t % 7 == 0) {   /* depthwise */
            c.G = c.C = rnd(2, 6);
            c.M = c.C * rnd(1, 2);
        }
        for (int i = 0; i < c.nd; i++) {
            c.k[i] = rnd(1, c.nd == 3 ? 2 : 3);
            c.s[i] = rnd(1, 2);
            c.d[i] = t % 3 == 0 ? rnd(1, 2) : 1;
            c.pb[i] = rnd(0, 2);
            c.pe[i] = rnd(0, 2);
            int64_t dk = (c.k[i] - 1) * c.d[i] + 1;
            c.in[i] = dk + rnd(0, c.nd == 3 ? 4 : 9);
            c.opad[i] = rnd(0, c.s[i] - 1);
        }
        if (t % 11 == 5) c.auto_pad = t % 2 ? "SAME_UPPER" : "SAME_LOWER";
        if (t % 13 == 3)   /* pointwise: the GEMM runs directly on X */
            for (int i = 0; i < c.nd; i++) c.k[i] = c.s[i] = 1, c.pb[i] = c.pe[i] = 0;
        bool init = t % 2 == 0;
        if (!run_conv_case(&c, false, init, tp)) failures++;
        if (!c.auto_pad) {
            for (int i = 0; i < c.nd; i++) {   /* ConvTranspose needs pads within the full output */
                int64_t full = c.s[i] * (c.in[i] - 1) + c.opad[i] + (c.k[i] - 1) * c.d[i] + 1;
                if (c.pb[i] + c.pe[i] >= full) c.pb[i] = c.pe[i] = 0;
            }
            if (!run_conv_case(&c, true, !init, tp)) failures++;
        }
    }
    CHECK(failures == 0);
    /* sizes that cross the GEMM blocks: 300 output positions, K = 16 * 9 */
    conv_case big = {.nd = 2, .N = 2, .C = 16, .M = 20, .G = 1, .in = {15, 20}, .k = {3, 3}, .s = {1, 1},
                     .d = {1, 1}, .pb = {1, 1}, .pe = {1, 1}, .bias = true};
    CHECK(run_conv_case(&big, false, true, tp));
    CHECK(run_conv_case(&big, false, false, tp));
    CHECK(run_conv_case(&big, true, false, tp));
    /* small outputs with many channels: the transposed product (W packed as
     * the right operand in init), shifted im2col, strided, pointwise, groups */
    static const conv_case small[] = {
        {.nd = 2, .N = 2, .C = 8, .M = 64, .G = 1, .in = {7, 7}, .k = {3, 3}, .s = {1, 1}, .d = {1, 1},
         .pb = {1, 1}, .pe = {1, 1}, .bias = true},
        {.nd = 2, .N = 1, .C = 6, .M = 96, .G = 2, .in = {13, 14}, .k = {3, 3}, .s = {2, 2}, .d = {1, 1},
         .pb = {1, 1}, .pe = {0, 1}, .bias = true},
        {.nd = 2, .N = 2, .C = 40, .M = 48, .G = 1, .in = {5, 5}, .k = {1, 1}, .s = {1, 1}, .d = {1, 1}},
        {.nd = 1, .N = 1, .C = 5, .M = 64, .G = 1, .in = {9}, .k = {3}, .s = {1}, .d = {2}, .pb = {2},
         .pe = {2}, .bias = true},
        /* depthwise rows wide enough for the 16-wide interior */
        {.nd = 2, .N = 1, .C = 4, .M = 8, .G = 4, .in = {6, 40}, .k = {3, 3}, .s = {1, 1}, .d = {1, 2},
         .pb = {1, 2}, .pe = {1, 1}, .bias = true},
        {.nd = 2, .N = 2, .C = 3, .M = 3, .G = 3, .in = {7, 45}, .k = {3, 5}, .s = {2, 2}, .d = {1, 1},
         .pb = {1, 2}, .pe = {0, 2}},
        /* pads too large for a padded copy of the channel: checked taps */
        {.nd = 2, .N = 1, .C = 2, .M = 2, .G = 2, .in = {3, 3}, .k = {3, 3}, .s = {INT64_C(1) << 31, 1},
         .d = {1, 1}, .pb = {INT64_C(1) << 30, 1}, .pe = {INT64_C(1) << 30, 1}, .bias = true},
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        for (int init = 0; init < 2; init++) {
            CHECK(run_conv_case(&small[i], false, init, tp));
            CHECK(run_conv_case(&small[i], false, init, NULL));
        }
}

static void test_conv_errors(void) {
    int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {6, 2, 3, 3}, wbad[4] = {6, 3, 3, 3}, wbig[4] = {6, 4, 7, 7};
    int64_t bd = 5, x3d[3] = {1, 4, 5};
    onyx_value *x = rand_tensor(4, xd), *w = rand_tensor(4, wd), *wb = rand_tensor(4, wbad);
    onyx_value *wg = rand_tensor(4, wbig), *b = rand_tensor(1, &bd), *x3 = rand_tensor(3, x3d);
    onyx_value *y = NULL;
    onyx_attr_proto g2 = attr_int("group", 2), g3 = attr_int("group", 3), g0 = attr_int("group", 0);
    int64_t negpads[4] = {0, -1, 0, 0}, s0[2] = {0, 1}, s3[3] = {1, 1, 1};
    onyx_attr_proto pads = attr_ints("pads", negpads, 4), strides = attr_ints("strides", s0, 2);
    onyx_attr_proto strides3 = attr_ints("strides", s3, 3), autopad = attr_str("auto_pad", "SAME");
    const onyx_value *ok_in[3] = {x, w, NULL}, *bad_w[3] = {x, wb, NULL}, *bias[3] = {x, w, b};
    const onyx_value *big_w[3] = {x, wg, NULL}, *rank_mix[3] = {x3, w, NULL};
    CHECK_ERR(run_op("Conv", 17, &g3, 1, ok_in, 3, &y, false, NULL), "divisible by group");
    CHECK_ERR(run_op("Conv", 17, &g0, 1, ok_in, 3, &y, false, NULL), "group 0");
    CHECK_ERR(run_op("Conv", 17, &g2, 1, bad_w, 3, &y, false, NULL), "does not fit");
    CHECK_ERR(run_op("Conv", 17, NULL, 0, ok_in, 3, &y, false, NULL), "does not fit");
    CHECK_ERR(run_op("Conv", 17, &g2, 1, bias, 3, &y, false, NULL), "bias");
    onyx_attr_proto gp[2] = {g2, pads}, gs[2] = {g2, strides}, gs3[2] = {g2, strides3}, ga[2] = {g2, autopad};
    CHECK_ERR(run_op("Conv", 17, gp, 2, ok_in, 3, &y, false, NULL), "pads[1]");
    CHECK_ERR(run_op("Conv", 17, gs, 2, ok_in, 3, &y, false, NULL), "strides[0]");
    CHECK_ERR(run_op("Conv", 17, gs3, 2, ok_in, 3, &y, false, NULL), "3 values");
    CHECK_ERR(run_op("Conv", 17, ga, 2, ok_in, 3, &y, false, NULL), "auto_pad");
    CHECK_ERR(run_op("Conv", 17, NULL, 0, big_w, 3, &y, false, NULL), "smaller than the dilated kernel");
    CHECK_ERR(run_op("Conv", 17, &g2, 1, rank_mix, 3, &y, false, NULL), "rank");
    CHECK_ERR(run_op("ConvTranspose", 17, &g3, 1, ok_in, 3, &y, false, NULL), "divisible by group");
    /* hostile sizes: overflow must be caught, not computed */
    int64_t huge2[2] = {INT64_MAX / 2, 1}, hugepads[4] = {INT64_MAX, 0, INT64_MAX, 0}, one2[2] = {1, 1};
    onyx_attr_proto hd[2] = {g2, attr_ints("dilations", huge2, 2)}, hp[2] = {g2, attr_ints("pads", hugepads, 4)};
    onyx_attr_proto hs[2] = {g2, attr_ints("strides", huge2, 2)};
    CHECK_ERR(run_op("Conv", 17, hd, 2, ok_in, 3, &y, false, NULL), "too large");
    CHECK_ERR(run_op("Conv", 17, hp, 2, ok_in, 3, &y, false, NULL), "too large");
    CHECK_OK(run_op("Conv", 17, hs, 2, ok_in, 3, &y, false, NULL));   /* one output row */
    CHECK(y && y->dims[2] == 1);
    onyx_value_destroy(y);
    y = NULL;
    onyx_attr_proto ct_os[3] = {g2, attr_ints("output_shape", huge2, 2), attr_ints("strides", one2, 2)};
    onyx_attr_proto ct_op[2] = {g2, attr_ints("output_padding", huge2, 2)};
    onyx_attr_proto ct_hs[2] = {g2, attr_ints("strides", huge2, 2)};
    int64_t wtd[4] = {4, 3, 3, 3};
    onyx_value *wt = rand_tensor(4, wtd);
    const onyx_value *ct_in[3] = {x, wt, NULL};
    CHECK_ERR(run_op("ConvTranspose", 17, ct_os, 3, ct_in, 3, &y, false, NULL), "out of range");
    CHECK_ERR(run_op("ConvTranspose", 17, ct_op, 2, ct_in, 3, &y, false, NULL), "overflows");
    CHECK_ERR(run_op("ConvTranspose", 17, ct_hs, 2, ct_in, 3, &y, false, NULL), "overflows");
    onyx_value_destroy(wt);
    CHECK_OK(run_op("Conv", 17, &g2, 1, ok_in, 3, &y, true, NULL));
    CHECK(y && y->rank == 4 && y->dims[1] == 6 && y->dims[2] == 3 && y->dims[3] == 3);
    onyx_value_destroy(y);
    onyx_value_destroy(x);
    onyx_value_destroy(w);
    onyx_value_destroy(wb);
    onyx_value_destroy(wg);
    onyx_value_destroy(b);
    onyx_value_destroy(x3);
}

/* MatMul with broadcast batch dims, 1-D operands and a packed constant B. */
static void test_matmul_op(onyx_threadpool *tp) {
    static const int64_t shapes[][2][5] = {
        /* rank, dims... for A then B */
        {{2, 5, 7}, {2, 7, 9}},           {{1, 7}, {2, 7, 9}},           {{2, 5, 7}, {1, 7}},
        {{1, 7}, {1, 7}},                 {{3, 2, 5, 7}, {2, 7, 3}},     {{4, 2, 1, 5, 7}, {3, 3, 7, 4}},
        {{3, 1, 33, 20}, {3, 4, 20, 50}}, {{3, 6, 30, 40}, {2, 40, 70}}, {{2, 0, 7}, {2, 7, 3}},
    };
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        const int64_t *sa = shapes[t][0], *sb = shapes[t][1];
        onyx_value *a = rand_tensor((int)sa[0], sa + 1), *b = rand_tensor((int)sb[0], sb + 1), *y = NULL;
        const onyx_value *in[2] = {a, b};
        for (int init = 0; init < 2; init++) {
            CHECK_OK(run_op("MatMul", 13, NULL, 0, in, 2, &y, init, tp));
            if (!y) continue;
            /* reference via numpy-style loops over the output */
            int ra = a->rank, rb = b->rank, ry = y->rank;
            int64_t M = ra == 1 ? 1 : a->dims[ra - 2], K = a->dims[ra - 1], N = rb == 1 ? 1 : b->dims[rb - 1];
            int nbatch = ry - (ra > 1) - (rb > 1);
            int64_t batches = 1;
            for (int i = 0; i < nbatch; i++) batches *= y->dims[i];
            double *ref = calloc((size_t)y->numel + 1, sizeof(double));
            for (int64_t bt = 0; bt < batches; bt++) {
                int64_t ia = 0, ib = 0, sa_ = 1, sb_ = 1, rem = bt;
                for (int i = nbatch - 1; i >= 0; i--) {
                    int64_t c = rem % y->dims[i];
                    rem /= y->dims[i];
                    int ka = i - (nbatch - (ra - 2)), kb = i - (nbatch - (rb - 2));
                    if (ra > 2 && ka >= 0) {
                        if (a->dims[ka] != 1) ia += c * sa_;
                        sa_ *= a->dims[ka];
                    }
                    if (rb > 2 && kb >= 0) {
                        if (b->dims[kb] != 1) ib += c * sb_;
                        sb_ *= b->dims[kb];
                    }
                }
                const float *am = (const float *)a->data + ia * M * K, *bm = (const float *)b->data + ib * K * N;
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++)
                        for (int64_t k = 0; k < K; k++) ref[(bt * M + i) * N + j] += (double)am[i * K + k] * bm[k * N + j];
            }
            CHECK(close_to(y, ref, y->numel, "MatMul"));
            free(ref);
            onyx_value_destroy(y);
        }
        onyx_value_destroy(a);
        onyx_value_destroy(b);
    }
    int64_t d1[2] = {3, 4}, d2[2] = {5, 6}, d0[1] = {4};
    onyx_value *a = rand_tensor(2, d1), *b = rand_tensor(2, d2), *s = rand_tensor(0, d0), *y = NULL;
    const onyx_value *bad[2] = {a, b}, *scalar[2] = {s, a};
    CHECK_ERR(run_op("MatMul", 13, NULL, 0, bad, 2, &y, false, NULL), "do not match");
    CHECK_ERR(run_op("MatMul", 13, NULL, 0, scalar, 2, &y, false, NULL), "rank >= 1");
    onyx_value_destroy(a);
    onyx_value_destroy(b);
    onyx_value_destroy(s);
}

/* Gemm with every C broadcast form, transposes, alpha/beta, packed B. */
static void test_gemm_op(onyx_threadpool *tp) {
    static const int64_t cshapes[][3] = {{0}, {1, 1}, {1, 11}, {2, 1, 11}, {2, 9, 1}, {2, 9, 11}, {2, 1, 1}, {-1}};
    for (size_t ci = 0; ci < sizeof cshapes / sizeof cshapes[0]; ci++)
        for (int t = 0; t < 8; t++) {
            bool ta = t & 1, tb = t & 2, init = t & 4;
            int64_t M = 9, N = 11, K = 13;
            int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N};
            onyx_value *a = rand_tensor(2, ad), *b = rand_tensor(2, bd), *c = NULL, *y = NULL;
            if (cshapes[ci][0] >= 0) c = rand_tensor((int)cshapes[ci][0], cshapes[ci] + 1);
            float alpha = t % 3 ? 0.5f : 1.0f, beta = t % 2 ? 2.0f : 1.0f;
            onyx_attr_proto attrs[4] = {attr_int("transA", ta), attr_int("transB", tb), attr_float("alpha", alpha),
                                        attr_float("beta", beta)};
            const onyx_value *in[3] = {a, b, c};
            CHECK_OK(run_op("Gemm", 13, attrs, 4, in, 3, &y, init, tp));
            double ref[99];
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double acc = 0;
                    for (int64_t k = 0; k < K; k++)
                        acc += (double)((float *)a->data)[ta ? k * M + i : i * K + k] *
                               ((float *)b->data)[tb ? j * K + k : k * N + j];
                    double cv = 0;
                    if (c) {
                        int64_t cm = c->rank == 2 ? c->dims[0] : 1, cn = c->rank ? c->dims[c->rank - 1] : 1;
                        cv = ((float *)c->data)[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
                    }
                    ref[i * N + j] = alpha * acc + beta * cv;
                }
            CHECK(close_to(y, ref, M * N, "Gemm"));
            onyx_value_destroy(y);
            onyx_value_destroy(a);
            onyx_value_destroy(b);
            onyx_value_destroy(c);
        }
    int64_t ad[2] = {3, 4}, bd[2] = {4, 5}, cd[2] = {2, 5};
    onyx_value *a = rand_tensor(2, ad), *b = rand_tensor(2, bd), *c = rand_tensor(2, cd), *y = NULL;
    const onyx_value *in[3] = {a, b, c}, *noc[3] = {a, b, NULL};
    CHECK_ERR(run_op("Gemm", 13, NULL, 0, in, 3, &y, false, NULL), "cannot be broadcast");
    CHECK_ERR(run_op("Gemm", 9, NULL, 0, noc, 3, &y, false, NULL), "required");
    onyx_attr_proto ta = attr_int("transA", 1);
    CHECK_ERR(run_op("Gemm", 13, &ta, 1, noc, 3, &y, false, NULL), "op(A)");
    onyx_value_destroy(a);
    onyx_value_destroy(b);
    onyx_value_destroy(c);
}

/* A copy of a float tensor in another float type. */
static onyx_value *convert_tensor(const onyx_value *v, int dtype) {
    onyx_value *o = NULL;
    CHECK_OK(onyx_tensor_new(dtype, v->rank, v->dims, &o));
    for (int64_t i = 0; o && i < v->numel; i++) onyx_store_from_double(dtype, o->data, i, ((float *)v->data)[i]);
    return o;
}

/* float16, bfloat16 and double give the float result (within their precision). */
static void test_other_types(onyx_threadpool *tp) {
    static const int types[] = {ONYX_FLOAT16, ONYX_BFLOAT16, ONYX_DOUBLE};
    int64_t xd[4] = {2, 4, 6, 5}, wd[4] = {6, 2, 3, 3}, bd = 6, ad[3] = {2, 7, 9}, md[2] = {9, 5};
    int64_t cd[1] = {5}, pads[4] = {1, 0, 1, 1};
    onyx_value *x = rand_tensor(4, xd), *w = rand_tensor(4, wd), *b = rand_tensor(1, &bd);
    onyx_value *a = rand_tensor(3, ad), *m = rand_tensor(2, md), *c = rand_tensor(1, cd);
    onyx_value *a2 = NULL, *wt = NULL;
    int64_t a2d[2] = {7, 9}, wtd[4] = {4, 3, 3, 3};
    a2 = rand_tensor(2, a2d);
    wt = rand_tensor(4, wtd);
    onyx_attr_proto conv_attrs[2] = {attr_int("group", 2), attr_ints("pads", pads, 4)};
    struct { const char *op; const onyx_value *in[3]; size_t n_in; const onyx_attr_proto *attrs; size_t n_attrs; } ops[] = {
        {"Conv", {x, w, b}, 3, conv_attrs, 2},
        {"ConvTranspose", {x, wt, b}, 3, conv_attrs, 2},
        {"MatMul", {a, m, NULL}, 2, NULL, 0},
        {"Gemm", {a2, m, c}, 3, NULL, 0},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        onyx_value *ref = NULL;
        CHECK_OK(run_op(ops[o].op, 22, ops[o].attrs, ops[o].n_attrs, ops[o].in, ops[o].n_in, &ref, false, tp));
        for (size_t t = 0; ref && t < sizeof types / sizeof types[0]; t++)
            for (int init = 0; init < 2; init++) {
                const onyx_value *in[3] = {NULL};
                onyx_value *conv[3] = {NULL}, *y = NULL;
                for (size_t i = 0; i < ops[o].n_in; i++) in[i] = conv[i] = convert_tensor(ops[o].in[i], types[t]);
                CHECK_OK(run_op(ops[o].op, 22, ops[o].attrs, ops[o].n_attrs, in, ops[o].n_in, &y, init, tp));
                CHECK(y && y->dtype == types[t] && y->numel == ref->numel);
                double tol = types[t] == ONYX_DOUBLE ? 1e-5 : types[t] == ONYX_FLOAT16 ? 2e-2 : 1e-1;
                for (int64_t i = 0; y && i < y->numel; i++) {
                    double got = onyx_load_as_double(y->dtype, y->data, i), want = ((float *)ref->data)[i];
                    if (!(fabs(got - want) <= tol * (1 + fabs(want)))) {
                        fprintf(stderr, "%s %s: element %lld = %g, float gives %g\n", ops[o].op,
                                onyx_dtype_name(types[t]), (long long)i, got, want);
                        CHECK(false);
                        break;
                    }
                }
                for (size_t i = 0; i < 3; i++) onyx_value_destroy(conv[i]);
                onyx_value_destroy(y);
            }
        onyx_value_destroy(ref);
    }
    onyx_value *vals[] = {x, w, b, a, m, c, a2, wt};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
}

/* MatMulInteger through float SGEMM in exact K slices: long K, extreme
 * values, per-row and per-column zero points, batches. */
static void test_matmul_integer(onyx_threadpool *tp) {
    const int64_t ad[3] = {2, 5, 600}, bd[2] = {600, 7}, azd[1] = {5}, bzd[1] = {7};
    onyx_value *a = NULL, *b = NULL, *az = NULL, *bz = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_new(ONYX_UINT8, 3, ad, &a));
    CHECK_OK(onyx_tensor_new(ONYX_INT8, 2, bd, &b));
    CHECK_OK(onyx_tensor_new(ONYX_UINT8, 1, azd, &az));
    CHECK_OK(onyx_tensor_new(ONYX_INT8, 1, bzd, &bz));
    if (!a || !b || !az || !bz) return;
    uint8_t *av = a->data, *azv = az->data;
    int8_t *bv = b->data, *bzv = bz->data;
    for (int64_t i = 0; i < a->numel; i++) av[i] = i % 3 ? 255 : (uint8_t)(i * 7);   /* mostly extremes */
    for (int64_t i = 0; i < b->numel; i++) bv[i] = i % 2 ? -128 : (int8_t)(i * 13);
    for (int i = 0; i < 5; i++) azv[i] = (uint8_t)(i * 50);
    for (int i = 0; i < 7; i++) bzv[i] = (int8_t)(127 - i * 40);
    const onyx_value *in[4] = {a, b, az, bz};
    CHECK_OK(run_op("MatMulInteger", 10, NULL, 0, in, 4, &y, false, tp));
    bool ok = y && y->dtype == ONYX_INT32 && y->numel == 2 * 5 * 7;
    for (int64_t t = 0; ok && t < 2; t++)
        for (int64_t i = 0; i < 5; i++)
            for (int64_t j = 0; j < 7; j++) {
                int64_t acc = 0;
                for (int64_t k = 0; k < 600; k++)
                    acc += (int64_t)(av[(t * 5 + i) * 600 + k] - azv[i]) * (bv[k * 7 + j] - bzv[j]);
                if (((int32_t *)y->data)[(t * 5 + i) * 7 + j] != (int32_t)acc) {
                    fprintf(stderr, "MatMulInteger [%lld,%lld,%lld] = %d, expected %lld\n", (long long)t,
                            (long long)i, (long long)j, ((int32_t *)y->data)[(t * 5 + i) * 7 + j], (long long)acc);
                    ok = false;
                }
            }
    CHECK(ok);
    onyx_value_destroy(y);
    onyx_value_destroy(a);
    onyx_value_destroy(b);
    onyx_value_destroy(az);
    onyx_value_destroy(bz);
}

/* ConvInteger through float SGEMM in exact channel slices (K = 40 * 9 is
 * more than one slice), per-channel weight zero points, against the float
 * reference on the zero-point-shifted values (exact there too). */
static void test_conv_integer(onyx_threadpool *tp) {
    conv_case c = {.nd = 2, .N = 2, .C = 40, .M = 6, .G = 2, .in = {7, 9}, .k = {3, 3}, .s = {2, 1},
                   .d = {1, 1}, .pb = {1, 1}, .pe = {0, 1}};
    int64_t xd[4] = {c.N, c.C, c.in[0], c.in[1]}, wd[4] = {c.M, c.C / c.G, 3, 3}, zd[1] = {c.M};
    int64_t pads[4] = {1, 1, 0, 1};
    onyx_value *x = NULL, *w = NULL, *xz = NULL, *wz = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_new(ONYX_UINT8, 4, xd, &x));
    CHECK_OK(onyx_tensor_new(ONYX_INT8, 4, wd, &w));
    CHECK_OK(onyx_tensor_new(ONYX_UINT8, 0, zd, &xz));
    CHECK_OK(onyx_tensor_new(ONYX_INT8, 1, zd, &wz));
    if (!x || !w || !xz || !wz) return;
    float *xf = malloc((size_t)x->numel * sizeof(float)), *wf = malloc((size_t)w->numel * sizeof(float));
    *(uint8_t *)xz->data = 200;
    for (int64_t m = 0; m < c.M; m++) ((int8_t *)wz->data)[m] = (int8_t)(m * 40 - 128);
    for (int64_t i = 0; i < x->numel; i++) {
        ((uint8_t *)x->data)[i] = i % 2 ? 255 : (uint8_t)(i * 31);
        xf[i] = (float)(((uint8_t *)x->data)[i] - 200);
    }
    int64_t per_m = w->numel / c.M;
    for (int64_t i = 0; i < w->numel; i++) {
        ((int8_t *)w->data)[i] = i % 3 ? 127 : (int8_t)(i * 17);
        wf[i] = (float)(((int8_t *)w->data)[i] - ((int8_t *)wz->data)[i / per_m]);
    }
    int64_t out[3], pb[3];
    conv_case_out(&c, false, out, pb);
    int64_t n_out = c.N * c.M * out[0] * out[1];
    double *ref = malloc((size_t)n_out * sizeof(double));
    conv_reference(&c, false, xf, wf, NULL, ref);
    onyx_attr_proto attrs[3] = {attr_int("group", c.G), attr_ints("strides", c.s, 2), attr_ints("pads", pads, 4)};
    const onyx_value *in[4] = {x, w, xz, wz};
    CHECK_OK(run_op("ConvInteger", 10, attrs, 3, in, 4, &y, false, tp));
    bool ok = y && y->dtype == ONYX_INT32 && y->numel == n_out;
    for (int64_t i = 0; ok && i < n_out; i++)
        if (((int32_t *)y->data)[i] != (int32_t)ref[i]) {
            fprintf(stderr, "ConvInteger element %lld = %d, expected %.0f\n", (long long)i, ((int32_t *)y->data)[i],
                    ref[i]);
            ok = false;
        }
    CHECK(ok);
    free(xf);
    free(wf);
    free(ref);
    onyx_value_destroy(x);
    onyx_value_destroy(w);
    onyx_value_destroy(xz);
    onyx_value_destroy(wz);
    onyx_value_destroy(y);
}

/* ConvInteger and QLinearConv share Conv's geometry (ir/schemas/conv.h):
 * each bad attribute set gives the same message on all three, and the
 * hostile strides that give Conv one output pixel give it to them too. */
static void test_conv_geometry_shared(void) {
    int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {6, 2, 3, 3}, one = 1;
    onyx_value *xf = rand_tensor(4, xd), *wf = rand_tensor(4, wd), *xq = NULL, *wq = NULL, *sc = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_new(ONYX_UINT8, 4, xd, &xq));
    CHECK_OK(onyx_tensor_new(ONYX_UINT8, 4, wd, &wq));
    CHECK_OK(onyx_tensor_new(ONYX_FLOAT, 0, &one, &sc));
    if (!xf || !wf || !xq || !wq || !sc) return;
    memset(xq->data, 3, (size_t)xq->numel);
    memset(wq->data, 1, (size_t)wq->numel);
    *(float *)sc->data = 1.0f;
    const onyx_value *fin[2] = {xf, wf}, *iin[2] = {xq, wq}, *qin[8] = {xq, sc, NULL, wq, sc, NULL, sc, NULL};
    int64_t negpads[4] = {0, -1, 0, 0}, s0[2] = {0, 1}, ks[2] = {2, 3}, big[2] = {INT64_MAX, INT64_MAX};
    int64_t huge_d[2] = {INT64_MAX / 2, 1};
    const onyx_attr_proto g2 = attr_int("group", 2);
    const struct {
        onyx_attr_proto a[2];
        size_t n;
    } cases[] = {
        {{attr_int("group", 3)}, 1}, {{attr_int("group", 0)}, 1}, {{g2, attr_ints("pads", negpads, 4)}, 2},
        {{g2, attr_ints("strides", s0, 2)}, 2}, {{g2, attr_ints("kernel_shape", ks, 2)}, 2},
        {{g2, attr_str("auto_pad", "SAME")}, 2}, {{g2, attr_ints("dilations", huge_d, 2)}, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        onyx_status *ef = run_op("Conv", 17, cases[i].a, cases[i].n, fin, 2, &y, false, NULL);
        onyx_status *ei = run_op("ConvInteger", 10, cases[i].a, cases[i].n, iin, 2, &y, false, NULL);
        onyx_status *eq = run_op("QLinearConv", 10, cases[i].a, cases[i].n, qin, 8, &y, false, NULL);
        const char *mf = ef ? onyx_status_message(ef) : "(ok)", *mi = ei ? onyx_status_message(ei) : "(ok)";
        const char *mq = eq ? onyx_status_message(eq) : "(ok)";
        CHECK(ef && ei && eq && !strcmp(mf, mi) && !strcmp(mf, mq));
        if (!(ef && ei && eq && !strcmp(mf, mi) && !strcmp(mf, mq)))
            fprintf(stderr, "case %zu: Conv '%s', ConvInteger '%s', QLinearConv '%s'\n", i, mf, mi, mq);
        onyx_status_free(ef);
        onyx_status_free(ei);
        onyx_status_free(eq);
    }
    const onyx_attr_proto strided[2] = {g2, attr_ints("strides", big, 2)};
    CHECK_OK(run_op("ConvInteger", 10, strided, 2, iin, 2, &y, false, NULL));
    CHECK(y && y->dtype == ONYX_INT32 && y->dims[1] == 6 && y->dims[2] == 1 && y->dims[3] == 1);
    CHECK(y && ((int32_t *)y->data)[0] == 2 * 9 * 3);   /* 2 channels x 9 taps of 3 * 1 */
    onyx_value_destroy(y);
    y = NULL;
    CHECK_OK(run_op("QLinearConv", 10, strided, 2, qin, 8, &y, false, NULL));
    CHECK(y && y->dtype == ONYX_UINT8 && y->dims[2] == 1 && y->dims[3] == 1 && ((uint8_t *)y->data)[0] == 54);
    onyx_value_destroy(y);
    onyx_value_destroy(xf);
    onyx_value_destroy(wf);
    onyx_value_destroy(xq);
    onyx_value_destroy(wq);
    onyx_value_destroy(sc);
}

/* Convolution throughput on ResNet-50's layer shapes (batch 1). */
static void bench_conv(onyx_threadpool *tp) {
    static const int64_t layers[][6] = {   /* C, H(=W), M, k, stride, count in the net */
        {3, 224, 64, 7, 2, 1},   {64, 56, 64, 1, 1, 3},    {64, 56, 64, 3, 1, 3},    {64, 56, 256, 1, 1, 4},
        {256, 56, 64, 1, 1, 2},  {256, 56, 128, 1, 1, 1}, {128, 56, 128, 3, 2, 1},  {128, 28, 128, 3, 1, 3},
        {128, 28, 512, 1, 1, 4}, {256, 56, 512, 1, 2, 1}, {512, 28, 128, 1, 1, 3}, {512, 28, 256, 1, 1, 1},
        {256, 28, 256, 3, 2, 1}, {256, 14, 256, 3, 1, 5}, {256, 14, 1024, 1, 1, 6}, {512, 28, 1024, 1, 2, 1},
        {1024, 14, 256, 1, 1, 5}, {1024, 14, 512, 1, 1, 1}, {512, 14, 512, 3, 2, 1}, {512, 7, 512, 3, 1, 2},
        {512, 7, 2048, 1, 1, 3}, {1024, 14, 2048, 1, 2, 1}, {2048, 7, 512, 1, 1, 2},
    };
    double total_s[2] = {0, 0}, total_flops = 0;
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
        int64_t C = layers[l][0], H = layers[l][1], M = layers[l][2], k = layers[l][3], s = layers[l][4];
        int64_t xd[4] = {1, C, H, H}, wd[4] = {M, C, k, k}, p = k / 2, pads[4] = {p, p, p, p}, st[2] = {s, s};
        onyx_value *x = rand_tensor(4, xd), *w = rand_tensor(4, wd), *b = rand_tensor(1, &M), *y = NULL;
        onyx_attr_proto attrs[2] = {attr_ints("pads", pads, 4), attr_ints("strides", st, 2)};
        const onyx_value *in[3] = {x, w, b};
        int64_t OH = (H + 2 * p - k) / s + 1;
        double flops = 2.0 * M * C * k * k * OH * OH;
        printf("  conv C=%-4lld H=%-3lld M=%-4lld k=%lld s=%lld x%lld:", (long long)C, (long long)H, (long long)M,
               (long long)k, (long long)s, (long long)layers[l][5]);
        for (int th = 0; th < (tp ? 2 : 1); th++) {
            double best = 1e30;
            for (int r = 0; r < 5; r++) {
                double t0 = now_s();
                CHECK_OK(run_op("Conv", 17, attrs, 2, in, 3, &y, false, th ? tp : NULL));
                double t = now_s() - t0;
                if (t < best) best = t;
                onyx_value_destroy(y);
                y = NULL;
            }
            total_s[th] += best * (double)layers[l][5];
            printf("  %s %6.2f ms %6.1f GFLOP/s", th ? "2T" : "1T", best * 1e3, flops / best * 1e-9);
        }
        total_flops += flops * (double)layers[l][5];
        printf("\n");
        onyx_value_destroy(x);
        onyx_value_destroy(w);
        onyx_value_destroy(b);
    }
    printf("  resnet50 convs: %.2f GFLOP, 1 thread %.1f ms (%.1f GFLOP/s)", total_flops * 1e-9, total_s[0] * 1e3,
           total_flops / total_s[0] * 1e-9);
    if (tp) printf(", %d threads %.1f ms", onyx_threadpool_threads(tp), total_s[1] * 1e3);
    printf("\n");
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of a few runs of C = A B (beta 0), in GFLOP/s. */
static double bench_one(size_t M, size_t N, size_t K, bool packed, onyx_threadpool *tp) {
    float *A = rand_buf(M * K), *B = rand_buf(K * N), *C = rand_buf(M * N);
    onyx_packed_mat *pb = NULL;
    if (packed) CHECK_OK(onyx_sgemm_pack_b(NULL, false, K, N, B, N, &pb));
    double best = 1e30, flops = 2.0 * M * N * K;
    int reps = 0;
    for (double t_total = 0; reps < 3 || (t_total < 1.0 && reps < 50); reps++) {
        double t0 = now_s();
        onyx_status *st = packed ? onyx_sgemm_packed(false, M, 1.0f, A, K, pb, 0.0f, C, N, NULL, tp)
                                 : onyx_sgemm(false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N, tp);
        double t = now_s() - t0;
        CHECK_OK(st);
        t_total += t;
        if (t < best) best = t;
    }
    onyx_packed_mat_free(pb);
    free(A);
    free(B);
    free(C);
    return flops / best * 1e-9;
}

/* Transformer shapes with the weights packed and cold, as in a model: a
 * GEMM per weight matrix, more of them than the caches hold (~96 MB), so
 * B streams from memory as it does between layers. Best round of the mean
 * time per GEMM, in GFLOP/s. */
static double bench_cold(size_t M, size_t N, size_t K, onyx_threadpool *tp) {
    size_t mats = ((size_t)96 << 20) / (K * N * sizeof(float));
    if (mats < 2) mats = 2;
    if (mats > 16) mats = 16;
    float *A = rand_buf(M * K), *B = rand_buf(K * N), *C = rand_buf(M * N);
    onyx_packed_mat **pb = calloc(mats, sizeof *pb);
    for (size_t i = 0; i < mats; i++) CHECK_OK(onyx_sgemm_pack_b(NULL, false, K, N, B, N, &pb[i]));
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now_s();
        for (size_t i = 0; i < mats; i++)
            CHECK_OK(onyx_sgemm_packed(false, M, 1.0f, A, K, pb[i], 0.0f, C, N, NULL, tp));
        double t = (now_s() - t0) / (double)mats;
        if (t < best) best = t;
    }
    for (size_t i = 0; i < mats; i++) onyx_packed_mat_free(pb[i]);
    free(pb);
    free(A);
    free(B);
    free(C);
    return 2.0 * (double)M * (double)N * (double)K / best * 1e-9;
}

static void bench_transformer(onyx_threadpool *tp) {
    static const size_t shapes[][3] = {{128, 768, 768}, {128, 2304, 768}, {128, 3072, 768}, {128, 768, 3072},
                                       {128, 50257, 768}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        printf("  cold-B %-8s M=%-5zu N=%-5zu K=%-5zu 1 thread: %6.1f GFLOP/s", onyx_gemm_isa_name(), M, N, K,
               bench_cold(M, N, K, NULL));
        if (tp) printf("  %d threads: %6.1f GFLOP/s", onyx_threadpool_threads(tp), bench_cold(M, N, K, tp));
        printf("\n");
    }
}

static void bench(onyx_threadpool *tp) {
    if (getenv("ONYX_BENCH_COLD")) {   /* the transformer shapes only */
        bench_transformer(tp);
        return;
    }
    static const size_t shapes[][3] = {{1024, 1024, 1024}, {4096, 4096, 1024}, {64, 3136, 576}, {256, 784, 1152},
                                       {512, 49, 4608}, {128, 768, 768}, {128, 3072, 768},
                                       {1, 1000, 2048}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        printf("  bench %-8s M=%-5zu N=%-5zu K=%-5zu 1 thread: %6.1f GFLOP/s (packed B %6.1f)",
               onyx_gemm_isa_name(), M, N, K, bench_one(M, N, K, false, NULL),
               bench_one(M, N, K, true, NULL));
        if (tp) printf("  %d threads: %6.1f GFLOP/s", onyx_threadpool_threads(tp), bench_one(M, N, K, false, tp));
        printf("\n");
    }
    bench_transformer(tp);
}

int main(int argc, char **argv) {
    bool do_bench = argc > 1 && strcmp(argv[1], "bench") == 0;
    const char *isa_arg = argc > 2 ? argv[2] : NULL;
    const char *default_isa = onyx_cpu()->name;
    onyx_threadpool *tp = onyx_threadpool_create(onyx_cpu_count() > 1 ? onyx_cpu_count() : 2);
    static const char *const isas[] = {"avx512", "avx2", "neon", "generic"};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (isa_arg && strcmp(isa_arg, isas[i]) != 0) continue;
        if (!onyx_cpu_force_isa(isas[i])) {
            printf("  %s: not supported by this CPU, skipped\n", isas[i]);
            continue;
        }
        if (do_bench) {
            bench(tp);
            continue;
        }
        test_sizes(NULL);   /* too small for threads; test_blocks covers those */
        test_blocks(tp);
        test_epilogues(tp);
        test_invariance(tp);
    }
    CHECK(onyx_cpu_force_isa(default_isa));
    if (do_bench) {
        bench_conv(tp);
    } else {
        test_degenerate();
        test_errors();
        test_conv_random(NULL);
        test_conv_random(tp);
        test_conv_errors();
        test_matmul_op(tp);
        test_gemm_op(tp);
        test_other_types(tp);
        test_matmul_integer(tp);
        test_conv_integer(tp);
        test_conv_geometry_shared();
    }
    onyx_threadpool_free(tp);
    return testlib_finish("test_gemm");
}
