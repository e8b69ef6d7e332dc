/* Element types: traits, byte sizes, float16/bfloat16/float8/float4
 * conversions (exhaustive round trips, known bit patterns, rounding edges
 * checked against a brute-force nearest-value search), and generic
 * load/store including packed sub-byte types. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/dtype_ext.h"
#include "testlib.h"

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* deterministic pseudo-random numbers (xorshift) */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_traits(void) {
    static const struct {
        int dt;
        const char *name;
        int bits;
    } expect[] = {
        {ONYX_FLOAT, "float32", 32},       {ONYX_UINT8, "uint8", 8},
        {ONYX_INT8, "int8", 8},            {ONYX_UINT16, "uint16", 16},
        {ONYX_INT16, "int16", 16},         {ONYX_INT32, "int32", 32},
        {ONYX_INT64, "int64", 64},         {ONYX_STRING, "str", 8 * (int)sizeof(onyx_string)},
        {ONYX_BOOL, "bool", 8},            {ONYX_FLOAT16, "float16", 16},
        {ONYX_DOUBLE, "float64", 64},      {ONYX_UINT32, "uint32", 32},
        {ONYX_UINT64, "uint64", 64},       {ONYX_COMPLEX64, "complex64", 64},
        {ONYX_COMPLEX128, "complex128", 128}, {ONYX_BFLOAT16, "bfloat16", 16},
        {ONYX_FLOAT8E4M3FN, "float8e4m3fn", 8}, {ONYX_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 8},
        {ONYX_FLOAT8E5M2, "float8e5m2", 8}, {ONYX_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 8},
        {ONYX_UINT4, "uint4", 4},          {ONYX_INT4, "int4", 4},
        {ONYX_FLOAT4E2M1, "float4e2m1", 4}, {ONYX_FLOAT8E8M0, "float8e8m0", 8},
        {ONYX_UINT2, "uint2", 2},          {ONYX_INT2, "int2", 2},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        const onyx_dtype_info *t = onyx_dtype(expect[i].dt);
        CHECK(onyx_dtype_valid(expect[i].dt));
        CHECK(strcmp(onyx_dtype_name(expect[i].dt), expect[i].name) == 0);
        CHECK(t->bits == expect[i].bits);
    }
    CHECK(!onyx_dtype_valid(0));
    CHECK(!onyx_dtype_valid(-1));
    CHECK(!onyx_dtype_valid(27));
    CHECK(!onyx_dtype_valid(1000));
    CHECK(onyx_dtype(1000)->bits == 0);
    CHECK(onyx_dtype_name(99) != NULL);
    CHECK(onyx_dtype(ONYX_FLOAT)->is_float && onyx_dtype(ONYX_FLOAT)->is_signed);
    CHECK(onyx_dtype(ONYX_FLOAT8E5M2)->is_float);
    CHECK(onyx_dtype(ONYX_INT4)->is_integer && onyx_dtype(ONYX_INT4)->is_signed);
    CHECK(onyx_dtype(ONYX_UINT64)->is_integer && !onyx_dtype(ONYX_UINT64)->is_signed);
    CHECK(!onyx_dtype(ONYX_BOOL)->is_integer && !onyx_dtype(ONYX_BOOL)->is_float);
    CHECK(!onyx_dtype(ONYX_STRING)->is_integer);
}

static void test_nbytes(void) {
    size_t n = 0;
    CHECK(onyx_dtype_nbytes(ONYX_FLOAT, 10, &n) && n == 40);
    CHECK(onyx_dtype_nbytes(ONYX_DOUBLE, 0, &n) && n == 0);
    CHECK(onyx_dtype_nbytes(ONYX_INT4, 5, &n) && n == 3);
    CHECK(onyx_dtype_nbytes(ONYX_UINT4, 4, &n) && n == 2);
    CHECK(onyx_dtype_nbytes(ONYX_FLOAT4E2M1, 1, &n) && n == 1);
    CHECK(onyx_dtype_nbytes(ONYX_INT2, 5, &n) && n == 2);
    CHECK(onyx_dtype_nbytes(ONYX_UINT2, 8, &n) && n == 2);
    CHECK(onyx_dtype_nbytes(ONYX_COMPLEX128, 3, &n) && n == 48);
    CHECK(onyx_dtype_nbytes(ONYX_STRING, 2, &n) && n == 2 * sizeof(onyx_string));
    CHECK(!onyx_dtype_nbytes(ONYX_FLOAT, -1, &n));
    CHECK(!onyx_dtype_nbytes(0, 1, &n));
    CHECK(!onyx_dtype_nbytes(ONYX_DOUBLE, INT64_MAX, &n));
    CHECK(onyx_dtype_nbytes(ONYX_INT4, INT64_MAX, &n) && n == (size_t)(INT64_MAX / 2 + 1));
}

/* ------------------------------------------------------------- float16 */

static void test_f16(void) {
    /* known bit patterns */
    CHECK(onyx_f32_to_f16(0.0f) == 0x0000);
    CHECK(onyx_f32_to_f16(-0.0f) == 0x8000);
    CHECK(onyx_f32_to_f16(1.0f) == 0x3c00);
    CHECK(onyx_f32_to_f16(-2.0f) == 0xc000);
    CHECK(onyx_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(onyx_f32_to_f16(65519.0f) == 0x7bff);  /* below the midpoint */
    CHECK(onyx_f32_to_f16(65520.0f) == 0x7c00);  /* midpoint rounds to even: Inf */
    CHECK(onyx_f32_to_f16(1e10f) == 0x7c00);
    CHECK(onyx_f32_to_f16(-INFINITY) == 0xfc00);
    CHECK((onyx_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (onyx_f32_to_f16(NAN) & 0x3ff));
    CHECK(onyx_f32_to_f16(0x1p-24f) == 0x0001);  /* smallest subnormal */
    CHECK(onyx_f32_to_f16(0x1p-25f) == 0x0000);  /* half of it: tie to even (0) */
    CHECK(onyx_f32_to_f16(0x1.8p-24f) == 0x0002); /* 1.5 ulp: tie to even (2) */
    CHECK(onyx_f32_to_f16(0x1.000002p-25f) == 0x0001); /* just above half */
    CHECK(onyx_f32_to_f16(0x1p-14f) == 0x0400);  /* smallest normal */
    CHECK(onyx_f32_to_f16(0x1.ff8p-15f) == 0x03ff); /* largest subnormal */
    CHECK(onyx_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00); /* tie -> even */
    CHECK(onyx_f32_to_f16(1.0f + 0x1.8p-10f) == 0x3c02); /* tie -> even (up) */
    CHECK(onyx_f32_to_f16(0.1f) == 0x2e66);
    CHECK(onyx_f16_to_f32(0x3555) == 0x1.554p-2f);
    CHECK(onyx_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(onyx_f16_to_f32(0x8000) == 0.0f && signbit(onyx_f16_to_f32(0x8000)));
    CHECK(isinf(onyx_f16_to_f32(0x7c00)) && onyx_f16_to_f32(0xfc00) < 0);
    CHECK(isnan(onyx_f16_to_f32(0x7e00)));

    /* exhaustive: every half round-trips, and both neighbours' midpoints
     * round to the even one */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = onyx_f16_to_f32((uint16_t)h);
        uint16_t back = onyx_f32_to_f16(f);
        if (isnan(f)) {
            if ((back & 0x7c00) != 0x7c00 || !(back & 0x3ff) || (back & 0x8000) != (h & 0x8000))
                bad++;
            continue;
        }
        if (back != h) bad++;
        /* midpoint to the next magnitude up (finite, below Inf) */
        uint32_t mag = h & 0x7fff;
        if (mag < 0x7bff) {
            float next = onyx_f16_to_f32((uint16_t)(h + 1));
            float mid = (float)(((double)f + (double)next) / 2); /* exact in float */
            uint16_t want = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
            if (onyx_f32_to_f16(mid) != want) bad++;
            if (onyx_f64_to_f16((double)mid) != want) bad++;
            /* slightly above the midpoint rounds away */
            float above = nextafterf(mid, (h & 0x8000) ? -INFINITY : INFINITY);
            if (onyx_f32_to_f16(above) != (uint16_t)(h + 1)) bad++;
        }
        if (onyx_f64_to_f16((double)f) != back) bad++;
    }
    CHECK(bad == 0);

    /* double -> half rounds once: a value just above a float16 midpoint
     * that float32 would round onto the midpoint */
    double just_above = 1.0 + 0x1p-11 + 0x1p-40;
    CHECK(onyx_f64_to_f16(just_above) == 0x3c01);
    CHECK(onyx_f32_to_f16((float)just_above) == 0x3c00); /* the double-rounded result */
    CHECK(onyx_f64_to_f16(1e300) == 0x7c00);
    CHECK(onyx_f64_to_f16(-1e-300) == 0x8000);
}

/* ------------------------------------------------------------ bfloat16 */

static void test_bf16(void) {
    CHECK(onyx_f32_to_bf16(1.0f) == 0x3f80);
    CHECK(onyx_f32_to_bf16(-0.0f) == 0x8000);
    CHECK(onyx_f32_to_bf16(from_bits(0x3f808000)) == 0x3f80); /* tie -> even */
    CHECK(onyx_f32_to_bf16(from_bits(0x3f818000)) == 0x3f82); /* tie -> even (up) */
    CHECK(onyx_f32_to_bf16(from_bits(0x3f808001)) == 0x3f81);
    CHECK(onyx_f32_to_bf16(from_bits(0x7f7fffff)) == 0x7f80); /* rounds to Inf */
    CHECK(onyx_f32_to_bf16(INFINITY) == 0x7f80);
    CHECK((onyx_f32_to_bf16(NAN) & 0x7fc0) == 0x7fc0);
    CHECK((onyx_f32_to_bf16(from_bits(0x7f800001)) & 0x7f) != 0); /* sNaN stays NaN */
    CHECK(onyx_f32_to_bf16(from_bits(0x00008000)) == 0x0000); /* subnormal tie */
    CHECK(onyx_f32_to_bf16(from_bits(0x00018000)) == 0x0002);
    CHECK(onyx_bf16_to_f32(0x4049) == 3.140625f);
    int bad = 0;
    for (uint32_t b = 0; b < 0x10000; b++) {
        float f = onyx_bf16_to_f32((uint16_t)b);
        if (fbits(f) != b << 16) bad++;
        if (isnan(f)) continue;
        if (onyx_f32_to_bf16(f) != b) bad++;
        if (onyx_f64_to_bf16((double)f) != b) bad++;
    }
    CHECK(bad == 0);
    /* random floats: f32 and f64 paths agree (float is exact in double) */
    for (int i = 0; i < 100000; i++) {
        float f = from_bits((uint32_t)rng());
        if (isnan(f)) continue;
        if (onyx_f32_to_bf16(f) != onyx_f64_to_bf16((double)f)) bad++;
    }
    CHECK(bad == 0);
}

/* --------------------------------------------------------- float8/float4 */

static bool is_uz(int dt) { return dt == ONYX_FLOAT8E4M3FNUZ || dt == ONYX_FLOAT8E5M2FNUZ; }

/* Reference encoder: the finite code nearest to x (ties to the even code),
 * found by searching all 256 codes; then the saturate rules of the spec. */
static uint8_t ref_f8(int dt, double x, bool saturate) {
    bool uz = is_uz(dt);
    if (isnan(x))
        return uz ? 0x80 : (uint8_t)((signbit(x) ? 0x80 : 0) | (dt == ONYX_FLOAT8E5M2 ? 0x7e : 0x7f));
    double maxv = 0;
    int best = -1;
    double best_d = INFINITY;
    for (int c = 0; c < 256; c++) {
        double v = onyx_f8_to_f64(dt, (uint8_t)c);
        if (isnan(v) || isinf(v)) continue;
        if (v > maxv) maxv = v;
        double d = fabs(v - x);
        if (d < best_d || (d == best_d && (c & 1) == 0 && (best & 1))) {
            /* among equal distances prefer the even mantissa; for +-0 prefer the signed match */
            best = c;
            best_d = d;
        }
    }
    uint8_t sign = signbit(x) ? 0x80 : 0;
    /* overflow: beyond max by at least half an ulp of the top binade */
    double top_ulp = dt == ONYX_FLOAT8E4M3FN ? 32 : dt == ONYX_FLOAT8E4M3FNUZ ? 16 : 8192;
    bool over = isinf(x) || fabs(x) > maxv + top_ulp / 2 ||
                (fabs(x) == maxv + top_ulp / 2 && dt != ONYX_FLOAT8E4M3FN);
    /* E4M3FN's max (448 = 1.110b) is even: the tie 464 rounds down to it; E4M3FNUZ and the
     * E5M2 maxima have odd mantissas (1.111b, 1.11b): their tie rounds up (overflow) */
    if (over) {
        if (saturate) return sign | onyx_f64_to_f8(dt, sign ? -maxv : maxv, true);
        if (uz) return 0x80;
        return sign | (dt == ONYX_FLOAT8E5M2 ? 0x7c : 0x7f);
    }
    uint8_t code = (uint8_t)(best & 0x7f);
    if (code == 0) return uz ? 0 : sign;
    return sign | code;
}

static void test_f8_format(int dt) {
    int bad = 0;
    /* every code decodes and re-encodes to itself (except NaNs / uz -0) */
    for (int c = 0; c < 256; c++) {
        double v = onyx_f8_to_f64(dt, (uint8_t)c);
        uint8_t back = onyx_f64_to_f8(dt, v, false);
        if (isnan(v)) {
            if (!isnan(onyx_f8_to_f64(dt, back))) bad++;
            continue;
        }
        if (back != c) bad++;
        if (onyx_f32_to_f8(dt, (float)v, true) != (isinf(v) ? (c & 0x80) | 0x7b : c)) bad++;
        if ((double)onyx_f8_to_f32(dt, (uint8_t)c) != v) bad++;
    }
    CHECK(bad == 0);
    /* midpoints between neighbours, +-tiny perturbations, random values */
    for (int c = 0; c < 0x7f; c++) {
        double a = onyx_f8_to_f64(dt, (uint8_t)c), b = onyx_f8_to_f64(dt, (uint8_t)(c + 1));
        if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) continue;
        double mid = (a + b) / 2;
        double pts[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY), -mid, a * 0.999, b * 1.001};
        for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++)
            for (int sat = 0; sat < 2; sat++)
                if (onyx_f64_to_f8(dt, pts[k], sat) != ref_f8(dt, pts[k], sat)) {
                    if (bad++ < 5)
                        fprintf(stderr, "f8 type %d x=%.17g sat=%d: got %02x want %02x\n", dt,
                                pts[k], sat, onyx_f64_to_f8(dt, pts[k], sat),
                                ref_f8(dt, pts[k], sat));
                }
    }
    for (int i = 0; i < 20000; i++) {
        /* values spread over the format's range and beyond */
        double x = ldexp((double)(rng() % 1000000) / 1000000.0, (int)(rng() % 40) - 24);
        if (rng() & 1) x = -x;
        for (int sat = 0; sat < 2; sat++)
            if (onyx_f64_to_f8(dt, x, sat) != ref_f8(dt, x, sat)) {
                if (bad++ < 5)
                    fprintf(stderr, "f8 type %d x=%.17g sat=%d: got %02x want %02x\n", dt, x, sat,
                            onyx_f64_to_f8(dt, x, sat), ref_f8(dt, x, sat));
            }
    }
    double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e6, -1e6, 1e-7, -1e-7, 1e30};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        for (int sat = 0; sat < 2; sat++)
            if (onyx_f64_to_f8(dt, specials[k], sat) != ref_f8(dt, specials[k], sat)) bad++;
    CHECK(bad == 0);
}

static void test_f8(void) {
    test_f8_format(ONYX_FLOAT8E4M3FN);
    test_f8_format(ONYX_FLOAT8E4M3FNUZ);
    test_f8_format(ONYX_FLOAT8E5M2);
    test_f8_format(ONYX_FLOAT8E5M2FNUZ);

    /* the conformance test vectors (onnx test_cast_FLOAT_to_FLOAT8*) */
    static const float in[15] = {0.47892547f, 0.48033667f, 0.49968487f, 0.81910545f, 0.47031248f,
                                 0.7229038f, 1000000.0f, 1e-7f, NAN, INFINITY, INFINITY,
                                 -INFINITY, -1e-7f, 1e-7f, -1000000.0f};
    static const uint8_t e4m3fn_sat[15] = {0x2f, 0x2f, 0x30, 0x35, 0x2f, 0x34, 0x7e, 0x00,
                                           0x7f, 0x7e, 0x7e, 0xfe, 0x80, 0x00, 0xfe};
    static const uint8_t e4m3fn_nosat[15] = {0x2f, 0x2f, 0x30, 0x35, 0x2f, 0x34, 0x7f, 0x00,
                                             0x7f, 0x7f, 0x7f, 0xff, 0x80, 0x00, 0xff};
    static const uint8_t e5m2_sat[15] = {0x38, 0x38, 0x38, 0x3b, 0x38, 0x3a, 0x7b, 0x00,
                                         0x7e, 0x7b, 0x7b, 0xfb, 0x80, 0x00, 0xfb};
    static const uint8_t e5m2_nosat[15] = {0x38, 0x38, 0x38, 0x3b, 0x38, 0x3a, 0x7c, 0x00,
                                           0x7e, 0x7c, 0x7c, 0xfc, 0x80, 0x00, 0xfc};
    static const uint8_t e4m3fnuz_sat[15] = {0x37, 0x37, 0x38, 0x3d, 0x37, 0x3c, 0x7f, 0x00,
                                             0x80, 0x7f, 0x7f, 0xff, 0x00, 0x00, 0xff};
    static const uint8_t e4m3fnuz_nosat[15] = {0x37, 0x37, 0x38, 0x3d, 0x37, 0x3c, 0x80, 0x00,
                                               0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x80};
    int bad = 0;
    for (int i = 0; i < 15; i++) {
        bad += onyx_f32_to_f8(ONYX_FLOAT8E4M3FN, in[i], true) != e4m3fn_sat[i];
        bad += onyx_f32_to_f8(ONYX_FLOAT8E4M3FN, in[i], false) != e4m3fn_nosat[i];
        bad += onyx_f32_to_f8(ONYX_FLOAT8E5M2, in[i], true) != e5m2_sat[i];
        bad += onyx_f32_to_f8(ONYX_FLOAT8E5M2, in[i], false) != e5m2_nosat[i];
        bad += onyx_f32_to_f8(ONYX_FLOAT8E4M3FNUZ, in[i], true) != e4m3fnuz_sat[i];
        bad += onyx_f32_to_f8(ONYX_FLOAT8E4M3FNUZ, in[i], false) != e4m3fnuz_nosat[i];
    }
    CHECK(bad == 0);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E4M3FN, 0x7e) == 448.0f);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E4M3FN, 0x01) == 0x1p-9f);
    CHECK(isnan(onyx_f8_to_f32(ONYX_FLOAT8E4M3FN, 0xff)));
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E4M3FNUZ, 0x7f) == 240.0f);
    CHECK(isnan(onyx_f8_to_f32(ONYX_FLOAT8E4M3FNUZ, 0x80)));
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E5M2, 0x7b) == 57344.0f);
    CHECK(isinf(onyx_f8_to_f32(ONYX_FLOAT8E5M2, 0x7c)));
    CHECK(isnan(onyx_f8_to_f32(ONYX_FLOAT8E5M2, 0x7d)));
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E5M2FNUZ, 0x7f) == 57344.0f);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E5M2FNUZ, 0x01) == 0x1p-17f);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E4M3FNUZ, 0x01) == 0x1p-10f);
    /* E4M3FN: 464 is the tie between 448 (even) and 480 (not finite) */
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E4M3FN, 464.0f, false) == 0x7e);
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E4M3FN, 465.0f, false) == 0x7f);
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E4M3FN, 465.0f, true) == 0x7e);
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E5M2, 61440.0f, false) == 0x7c);
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E5M2, 61439.0f, false) == 0x7b);
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E4M3FNUZ, -0.0f, false) == 0x00);
    CHECK(onyx_f32_to_f8(ONYX_FLOAT8E4M3FN, -0.0f, false) == 0x80);
}

static void test_e8m0(void) {
    /* conformance vectors: saturate, round up */
    static const float in[8] = {0.0f, 0.124f, 0.25f, 0.5f, 1.1f, 2.0f, 4.0f, 8.0f};
    static const uint8_t out[8] = {0x00, 0x7c, 0x7d, 0x7e, 0x80, 0x80, 0x81, 0x82};
    int bad = 0;
    for (int i = 0; i < 8; i++) bad += onyx_f32_to_f8(ONYX_FLOAT8E8M0, in[i], true) != out[i];
    CHECK(bad == 0);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E8M0, 0x7f) == 1.0f);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E8M0, 0x00) == 0x1p-127f);
    CHECK(onyx_f8_to_f32(ONYX_FLOAT8E8M0, 0xfe) == 0x1p127f);
    CHECK(isnan(onyx_f8_to_f32(ONYX_FLOAT8E8M0, 0xff)));
    CHECK(onyx_f32_to_e8m0(1.1f, true, ONYX_E8M0_ROUND_DOWN) == 0x7f);
    CHECK(onyx_f32_to_e8m0(1.4f, true, ONYX_E8M0_ROUND_NEAREST) == 0x7f);
    CHECK(onyx_f32_to_e8m0(1.5f, true, ONYX_E8M0_ROUND_NEAREST) == 0x80); /* ties up */
    CHECK(onyx_f32_to_e8m0(3.0f, true, ONYX_E8M0_ROUND_UP) == 0x81);
    CHECK(onyx_f32_to_e8m0(3e38f, true, ONYX_E8M0_ROUND_UP) == 0xfe);  /* saturates */
    CHECK(onyx_f32_to_e8m0(3e38f, false, ONYX_E8M0_ROUND_UP) == 0xff); /* NaN */
    CHECK(onyx_f32_to_e8m0(INFINITY, true, ONYX_E8M0_ROUND_UP) == 0xfe);
    CHECK(onyx_f32_to_e8m0(INFINITY, false, ONYX_E8M0_ROUND_UP) == 0xff);
    CHECK(onyx_f32_to_e8m0(NAN, true, ONYX_E8M0_ROUND_UP) == 0xff);
    for (int c = 0; c < 255; c++) {
        float v = onyx_f8_to_f32(ONYX_FLOAT8E8M0, (uint8_t)c);
        bad += onyx_f32_to_f8(ONYX_FLOAT8E8M0, v, true) != c;
    }
    CHECK(bad == 0);
}

static void test_f4(void) {
    static const float vals[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (int c = 0; c < 16; c++) {
        float v = onyx_f4_to_f32((uint8_t)c);
        CHECK(fabsf(v) == vals[c & 7] && (signbit(v) != 0) == ((c & 8) != 0));
        CHECK(onyx_f32_to_f4(v, true) == c);
    }
    /* conformance vector (test_cast_FLOAT_to_FLOAT4E2M1) */
    static const float in[15] = {0.48f, 0.25f, 1.05f, -3.5f, -8, 9, 1000000, 1e-7f, NAN,
                                 INFINITY, INFINITY, -INFINITY, -4, 0.01f, -0.0f};
    static const uint8_t out[15] = {0x1, 0x0, 0x2, 0xe, 0xf, 0x7, 0x7, 0x0,
                                    0x8, 0x7, 0x7, 0xf, 0xe, 0x0, 0x8};
    int bad = 0;
    for (int i = 0; i < 15; i++) bad += onyx_f32_to_f4(in[i], true) != out[i];
    CHECK(bad == 0);
    /* ties to even: 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4 */
    CHECK(onyx_f32_to_f4(0.75f, true) == 0x2);
    CHECK(onyx_f32_to_f4(1.25f, true) == 0x2);
    CHECK(onyx_f32_to_f4(1.75f, true) == 0x4);
    CHECK(onyx_f32_to_f4(2.5f, true) == 0x4);
    CHECK(onyx_f32_to_f4(5.0f, true) == 0x6);
    CHECK(onyx_f32_to_f4(5.01f, true) == 0x7);
    CHECK(onyx_f32_to_f4(-0.26f, true) == 0x9);
}

/* --------------------------------------------------------- load / store */

static void test_load_store(void) {
    /* int4: packed low nibble first, sign-extended */
    uint8_t packed[3] = {0x87, 0x0f, 0xa5};
    CHECK(onyx_load_as_int64(ONYX_INT4, packed, 0) == 7);
    CHECK(onyx_load_as_int64(ONYX_INT4, packed, 1) == -8);
    CHECK(onyx_load_as_int64(ONYX_INT4, packed, 2) == -1);
    CHECK(onyx_load_as_int64(ONYX_INT4, packed, 3) == 0);
    CHECK(onyx_load_as_int64(ONYX_UINT4, packed, 1) == 8);
    CHECK(onyx_load_as_double(ONYX_UINT4, packed, 5) == 10.0);
    uint8_t buf[4] = {0};
    int64_t vals[] = {-9, -8, -7, -1, 0, 7, 8, 15};
    for (int i = 0; i < 8; i++) onyx_store_from_int64(ONYX_INT4, buf, i, vals[i]);
    CHECK(buf[0] == 0x87 && buf[1] == 0xf9 && buf[2] == 0x70 && buf[3] == 0xf8);
    for (int i = 0; i < 8; i++) {
        int64_t want = ((vals[i] & 0xf) ^ 8) - 8;
        CHECK(onyx_load_as_int64(ONYX_INT4, buf, i) == want);
    }
    /* int2/uint2: four per byte, first in bits 0-1 */
    uint8_t b2[2] = {0};
    int64_t v2[] = {-3, -2, -1, 0, 1, 2, 3};
    for (int i = 0; i < 7; i++) onyx_store_from_double(ONYX_INT2, b2, i, (double)v2[i]);
    CHECK(b2[0] == 0x39 && b2[1] == 0x39); /* as the conformance test test_cast_FLOAT_to_INT2 */
    CHECK(onyx_load_as_int64(ONYX_INT2, b2, 0) == 1);
    CHECK(onyx_load_as_int64(ONYX_INT2, b2, 1) == -2);
    CHECK(onyx_load_as_int64(ONYX_UINT2, b2, 1) == 2);
    CHECK(onyx_load_as_int64(ONYX_INT2, b2, 2) == -1);
    /* float4 packed */
    uint8_t f4[1] = {0};
    onyx_store_from_double(ONYX_FLOAT4E2M1, f4, 0, 0.5);
    onyx_store_from_double(ONYX_FLOAT4E2M1, f4, 1, -6);
    CHECK(f4[0] == 0xf1);
    CHECK(onyx_load_as_double(ONYX_FLOAT4E2M1, f4, 1) == -6.0);

    /* plain types: wrap on integer narrowing, exact int64 */
    int8_t i8[1];
    onyx_store_from_int64(ONYX_INT8, i8, 0, 200);
    CHECK(i8[0] == -56);
    onyx_store_from_double(ONYX_INT8, i8, 0, -1.9);
    CHECK(i8[0] == -1);
    int64_t i64[1];
    onyx_store_from_int64(ONYX_INT64, i64, 0, INT64_MAX);
    CHECK(onyx_load_as_int64(ONYX_INT64, i64, 0) == INT64_MAX);
    onyx_store_from_double(ONYX_INT64, i64, 0, NAN); /* must not trap */
    onyx_store_from_double(ONYX_INT64, i64, 0, 1e300);
    uint64_t u64[1];
    onyx_store_from_double(ONYX_UINT64, u64, 0, 1.8e19);
    CHECK(u64[0] == 18000000000000000000ull);
    CHECK(onyx_load_as_double(ONYX_UINT64, u64, 0) == 1.8e19);
    uint8_t bl[1];
    onyx_store_from_double(ONYX_BOOL, bl, 0, NAN);
    CHECK(bl[0] == 1);
    onyx_store_from_double(ONYX_BOOL, bl, 0, -0.0);
    CHECK(bl[0] == 0);
    uint16_t h[1];
    onyx_store_from_double(ONYX_FLOAT16, h, 0, 1.0);
    CHECK(h[0] == 0x3c00);
    onyx_store_from_int64(ONYX_BFLOAT16, h, 0, 3);
    CHECK(h[0] == 0x4040);
    CHECK(onyx_load_as_int64(ONYX_BFLOAT16, h, 0) == 3);
    uint8_t f8[1];
    onyx_store_from_double(ONYX_FLOAT8E4M3FN, f8, 0, 1e9); /* saturates */
    CHECK(f8[0] == 0x7e);
    CHECK(onyx_load_as_double(ONYX_FLOAT8E4M3FN, f8, 0) == 448.0);
    float c64[2] = {1.5f, 2.0f};
    CHECK(onyx_load_as_double(ONYX_COMPLEX64, c64, 0) == 1.5);
    /* unknown types neither crash nor recurse */
    CHECK(onyx_load_as_int64(0, c64, 0) == 0);
    CHECK(isnan(onyx_load_as_double(0, c64, 0)));
    onyx_store_from_double(0, c64, 0, 1.0);
    onyx_store_from_int64(99, c64, 0, 1);
    CHECK(c64[0] == 1.5f);
}

static void test_ext_helpers(void) {
    /* the inline float16/bfloat16 conversions are the library's */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float a = onyx_f16_to_f32_inline((uint16_t)h), b = onyx_f16_to_f32((uint16_t)h);
        if (fbits(a) != fbits(b)) bad++;
        if (fbits(onyx_bf16_to_f32_inline((uint16_t)h)) != (h << 16)) bad++;
    }
    for (int i = 0; i < 200000; i++) {
        float f = from_bits((uint32_t)rng());
        if (onyx_f32_to_f16_inline(f) != onyx_f32_to_f16(f)) bad++;
        if (onyx_f32_to_bf16_inline(f) != onyx_f32_to_bf16(f)) bad++;
    }
    CHECK(bad == 0);
    CHECK(onyx_select_u32(1, 5, 7) == 5 && onyx_select_u32(0, 5, 7) == 7);
    /* float -> integer conversions are defined for every input */
    CHECK(onyx_f64_to_i64_safe(-2.9) == -2);
    CHECK(onyx_f64_to_i64_safe(2.9) == 2);
    CHECK(onyx_f64_to_i64_safe(NAN) == INT64_MIN);
    CHECK(onyx_f64_to_i64_safe(1e300) == INT64_MIN);
    CHECK(onyx_f64_to_i64_safe(-0x1p63) == INT64_MIN);
    CHECK(onyx_f64_to_i64_safe(0x1p62) == (int64_t)1 << 62);
    CHECK(onyx_f64_to_u64_safe(0x1p63) == (uint64_t)1 << 63);
    CHECK(onyx_f64_to_u64_safe(1.8e19) == 18000000000000000000ull);
    CHECK(onyx_f64_to_u64_safe(-1.0) == UINT64_MAX);
    CHECK(onyx_f64_to_u64_safe(1e30) == (uint64_t)INT64_MIN);
}

int main(void) {
    test_traits();
    test_nbytes();
    test_f16();
    test_bf16();
    test_f8();
    test_e8m0();
    test_f4();
    test_load_store();
    test_ext_helpers();
    return testlib_finish("test_dtype");
}
