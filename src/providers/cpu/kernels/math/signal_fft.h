/* Complex FFT engine of kernels/math/signal.c, written once for a real type and
 * included once per precision (float and double). Before including,
 * define FFT_REAL (the type) and FFT_(name) (the name mangling, e.g.
 * name##_f32).
 *
 * The transform is the mixed-radix Cooley-Tukey scheme of FFTPACK:
 * length n = f1 * f2 * ... with the factors 8, 4 and 2 taken first (one 2
 * moved to the front) and then the odd primes in increasing order; pass j
 * combines f_j sub-transforms with the twiddles exp(2 pi i j l1 i / n).
 * Radix 2, 4 and 8 have dedicated butterflies; every odd radix uses the
 * symmetric form (sums and differences of x[m] and x[p-m], so only (p-1)/2
 * cosines and sines). The operation order of each butterfly is the one of
 * pocketfft, which numpy >= 2 uses for the reference outputs: computing at
 * the input's precision with the same roundings reproduces the reference
 * to the last bit, including the rounding noise in values that are zero in
 * exact arithmetic. Lengths whose largest prime factor is large go through
 * Bluestein's algorithm (a convolution of two smooth-length FFTs), chosen
 * by the same cost rule. Twiddles are computed in double with octant
 * reduction and rounded once to FFT_REAL. The bit match assumes no FMA
 * contraction (true for the x86-64 baseline the file is compiled for).
 *
 * No include guard: included once per precision, after signal.c's
 * dft_job, sig_load and sig_store, which the line loops at the end use. */

typedef struct FFT_(cplx) {
    FFT_REAL r, i;
} FFT_(cplx);

#define FFT_MAX_FACTORS 64

typedef struct FFT_(plan) {
    size_t n;
    /* mixed radix */
    int nfct;
    size_t fct[FFT_MAX_FACTORS];
    FFT_(cplx) *tw[FFT_MAX_FACTORS];   /* (fct - 1) * (ido - 1) twiddles per pass */
    FFT_(cplx) *cs[FFT_MAX_FACTORS];   /* odd radix p: (cos, sin)(2 pi k / p), k = 1 .. (p-1)/2 */
    FFT_(cplx) *mem;
    /* Bluestein: n2 >= 2n - 1, the chirp bk and the FFT of the kernel bkf */
    size_t n2;
    struct FFT_(plan) *sub;
    FFT_(cplx) *bk, *bkf;
} FFT_(plan);

static inline FFT_(cplx) FFT_(add)(FFT_(cplx) a, FFT_(cplx) b) {
    return (FFT_(cplx)){a.r + b.r, a.i + b.i};
}

static inline FFT_(cplx) FFT_(sub)(FFT_(cplx) a, FFT_(cplx) b) {
    return (FFT_(cplx)){a.r - b.r, a.i - b.i};
}

/* v * conj(w) forward, v * w backward. */
static inline FFT_(cplx) FFT_(twmul)(FFT_(cplx) v, FFT_(cplx) w, bool fwd) {
    if (fwd) return (FFT_(cplx)){v.r * w.r + v.i * w.i, v.i * w.r - v.r * w.i};
    return (FFT_(cplx)){v.r * w.r - v.i * w.i, v.r * w.i + v.i * w.r};
}

/* Multiplication by -i forward, +i backward. */
static inline FFT_(cplx) FFT_(rot90)(FFT_(cplx) a, bool fwd) {
    return fwd ? (FFT_(cplx)){a.i, -a.r} : (FFT_(cplx)){-a.i, a.r};
}

/* Multiplication by exp(-+ i pi / 4) and exp(-+ 3 i pi / 4). */
static inline FFT_(cplx) FFT_(rot45)(FFT_(cplx) a, bool fwd) {
    const FFT_REAL h = (FFT_REAL)0.707106781186547524400844362104849;
    if (fwd) return (FFT_(cplx)){h * (a.r + a.i), h * (a.i - a.r)};
    return (FFT_(cplx)){h * (a.r - a.i), h * (a.i + a.r)};
}

static inline FFT_(cplx) FFT_(rot135)(FFT_(cplx) a, bool fwd) {
    const FFT_REAL h = (FFT_REAL)0.707106781186547524400844362104849;
    if (fwd) return (FFT_(cplx)){h * (a.i - a.r), h * (-a.r - a.i)};
    return (FFT_(cplx)){h * (-a.r - a.i), h * (a.r - a.i)};
}

/* Index helpers of one pass: input CC(i, m, k) (ido x p x l1), output
 * CH(i, k, m) (ido x l1 x p), twiddle WA(m, i). */
#define FFT_CC(i, m, k) cc[(i) + ido * ((m) + p * (k))]
#define FFT_CH(i, k, m) ch[(i) + ido * ((k) + l1 * (m))]
#define FFT_WA(m, i) wa[(i) - 1 + (m) * (ido - 1)]

/* Output m of the butterfly at position i: twiddled except at i == 0. */
#define FFT_PUT(i, k, m, v) (FFT_CH(i, k, m) = (i) ? FFT_(twmul)((v), FFT_WA((m) - 1, i), fwd) : (v))

static void FFT_(pass2)(size_t ido, size_t l1, const FFT_(cplx) *cc, FFT_(cplx) *ch, const FFT_(cplx) *wa,
                        bool fwd) {
    const size_t p = 2;
    for (size_t k = 0; k < l1; k++)
        for (size_t i = 0; i < ido; i++) {
            FFT_CH(i, k, 0) = FFT_(add)(FFT_CC(i, 0, k), FFT_CC(i, 1, k));
            FFT_PUT(i, k, 1, FFT_(sub)(FFT_CC(i, 0, k), FFT_CC(i, 1, k)));
        }
}

static void FFT_(pass4)(size_t ido, size_t l1, const FFT_(cplx) *cc, FFT_(cplx) *ch, const FFT_(cplx) *wa,
                        bool fwd) {
    const size_t p = 4;
    for (size_t k = 0; k < l1; k++)
        for (size_t i = 0; i < ido; i++) {
            FFT_(cplx) t2 = FFT_(add)(FFT_CC(i, 0, k), FFT_CC(i, 2, k));
            FFT_(cplx) t1 = FFT_(sub)(FFT_CC(i, 0, k), FFT_CC(i, 2, k));
            FFT_(cplx) t3 = FFT_(add)(FFT_CC(i, 1, k), FFT_CC(i, 3, k));
            FFT_(cplx) t4 = FFT_(rot90)(FFT_(sub)(FFT_CC(i, 1, k), FFT_CC(i, 3, k)), fwd);
            FFT_CH(i, k, 0) = FFT_(add)(t2, t3);
            FFT_PUT(i, k, 1, FFT_(add)(t1, t4));
            FFT_PUT(i, k, 2, FFT_(sub)(t2, t3));
            FFT_PUT(i, k, 3, FFT_(sub)(t1, t4));
        }
}

static void FFT_(pass8)(size_t ido, size_t l1, const FFT_(cplx) *cc, FFT_(cplx) *ch, const FFT_(cplx) *wa,
                        bool fwd) {
    const size_t p = 8;
    for (size_t k = 0; k < l1; k++)
        for (size_t i = 0; i < ido; i++) {
            /* odd inputs: a1 + a3, (a1 - a3) i, and the two 45-degree terms */
            FFT_(cplx) a1 = FFT_(add)(FFT_CC(i, 1, k), FFT_CC(i, 5, k));
            FFT_(cplx) a5 = FFT_(sub)(FFT_CC(i, 1, k), FFT_CC(i, 5, k));
            FFT_(cplx) a3 = FFT_(add)(FFT_CC(i, 3, k), FFT_CC(i, 7, k));
            FFT_(cplx) a7 = FFT_(rot90)(FFT_(sub)(FFT_CC(i, 3, k), FFT_CC(i, 7, k)), fwd);
            FFT_(cplx) s13 = FFT_(add)(a1, a3), d13 = FFT_(rot90)(FFT_(sub)(a1, a3), fwd);
            FFT_(cplx) s57 = FFT_(rot45)(FFT_(add)(a5, a7), fwd), d57 = FFT_(rot135)(FFT_(sub)(a5, a7), fwd);
            /* even inputs */
            FFT_(cplx) a0 = FFT_(add)(FFT_CC(i, 0, k), FFT_CC(i, 4, k));
            FFT_(cplx) a4 = FFT_(sub)(FFT_CC(i, 0, k), FFT_CC(i, 4, k));
            FFT_(cplx) a2 = FFT_(add)(FFT_CC(i, 2, k), FFT_CC(i, 6, k));
            FFT_(cplx) a6 = FFT_(rot90)(FFT_(sub)(FFT_CC(i, 2, k), FFT_CC(i, 6, k)), fwd);
            FFT_(cplx) s02 = FFT_(add)(a0, a2), d02 = FFT_(sub)(a0, a2);
            FFT_(cplx) s46 = FFT_(add)(a4, a6), d46 = FFT_(sub)(a4, a6);
            FFT_CH(i, k, 0) = FFT_(add)(s02, s13);
            FFT_PUT(i, k, 4, FFT_(sub)(s02, s13));
            FFT_PUT(i, k, 2, FFT_(add)(d02, d13));
            FFT_PUT(i, k, 6, FFT_(sub)(d02, d13));
            FFT_PUT(i, k, 1, FFT_(add)(s46, s57));
            FFT_PUT(i, k, 5, FFT_(sub)(s46, s57));
            FFT_PUT(i, k, 3, FFT_(add)(d46, d57));
            FFT_PUT(i, k, 7, FFT_(sub)(d46, d57));
        }
}

/* Any odd radix p. s[m] = x[m] + x[p-m], d[m] = x[m] - x[p-m] (m = 1 ..
 * h); output u and p-u are ca +- cb with ca = x0 + sum cos(2 pi u m / p)
 * s[m] and cb = i * sum sin(...) d[m], accumulated left to right. sd holds
 * 2h values of scratch. */
static void FFT_(pass_odd)(size_t ido, size_t l1, size_t p, const FFT_(cplx) *cc, FFT_(cplx) *ch,
                           const FFT_(cplx) *wa, const FFT_(cplx) *cs, bool fwd, FFT_(cplx) *sd) {
    const size_t h = (p - 1) / 2;
    FFT_(cplx) *s = sd - 1, *d = sd + h - 1;   /* s[1..h], d[1..h] */
    const FFT_REAL sgn = fwd ? -1 : 1;
    for (size_t k = 0; k < l1; k++)
        for (size_t i = 0; i < ido; i++) {
            const FFT_(cplx) t0 = FFT_CC(i, 0, k);
            FFT_(cplx) sum = t0;
            for (size_t m = 1; m <= h; m++) {
                s[m] = FFT_(add)(FFT_CC(i, m, k), FFT_CC(i, p - m, k));
                d[m] = FFT_(sub)(FFT_CC(i, m, k), FFT_CC(i, p - m, k));
                sum.r = sum.r + s[m].r;
                sum.i = sum.i + s[m].i;
            }
            FFT_CH(i, k, 0) = sum;
            for (size_t u = 1; u <= h; u++) {
                FFT_(cplx) ca = t0;
                FFT_REAL cbr = 0, cbi = 0;
                size_t q = 0;
                for (size_t m = 1; m <= h; m++) {
                    q += u;
                    if (q >= p) q -= p;
                    FFT_REAL c = q <= h ? cs[q - 1].r : cs[p - q - 1].r;
                    FFT_REAL y = q <= h ? sgn * cs[q - 1].i : -(sgn * cs[p - q - 1].i);
                    ca.r = ca.r + c * s[m].r;
                    ca.i = ca.i + c * s[m].i;
                    if (m == 1) {
                        cbi = y * d[m].r;
                        cbr = y * d[m].i;
                    } else {
                        cbi = cbi + y * d[m].r;
                        cbr = cbr + y * d[m].i;
                    }
                }
                FFT_(cplx) cb = {-cbr, cbi};
                FFT_PUT(i, k, u, FFT_(add)(ca, cb));
                FFT_PUT(i, k, p - u, FFT_(sub)(ca, cb));
            }
        }
}

/* Odd radix p > 11: the same sums, accumulated two terms at a time with
 * the angle index stepped modulo p (the order of pocketfft's generic
 * pass, so its results match to the bit here too). */
static void FFT_(pass_big)(size_t ido, size_t l1, size_t p, const FFT_(cplx) *cc, FFT_(cplx) *ch,
                           const FFT_(cplx) *wa, const FFT_(cplx) *cs, bool fwd, FFT_(cplx) *sd) {
    const size_t h = (p - 1) / 2;
    FFT_(cplx) *s = sd - 1, *d = sd + h - 1;   /* s[1..h], d[1..h] */
    const FFT_REAL sgn = fwd ? -1 : 1;
#define FFT_WC(q) ((q) <= h ? cs[(q) - 1].r : cs[p - (q) - 1].r)
#define FFT_WS(q) ((q) <= h ? sgn * cs[(q) - 1].i : -(sgn * cs[p - (q) - 1].i))
    for (size_t k = 0; k < l1; k++)
        for (size_t i = 0; i < ido; i++) {
            const FFT_(cplx) t0 = FFT_CC(i, 0, k);
            FFT_(cplx) sum = t0;
            for (size_t m = 1; m <= h; m++) {
                s[m] = FFT_(add)(FFT_CC(i, m, k), FFT_CC(i, p - m, k));
                d[m] = FFT_(sub)(FFT_CC(i, m, k), FFT_CC(i, p - m, k));
                sum = FFT_(add)(sum, s[m]);
            }
            FFT_CH(i, k, 0) = sum;
            for (size_t u = 1; u <= h; u++) {
                const size_t u2 = 2 * u;   /* < p */
                FFT_REAL car = t0.r + FFT_WC(u) * s[1].r + FFT_WC(u2) * s[2].r;
                FFT_REAL cai = t0.i + FFT_WC(u) * s[1].i + FFT_WC(u2) * s[2].i;
                FFT_REAL cbr = -FFT_WS(u) * d[1].i - FFT_WS(u2) * d[2].i;
                FFT_REAL cbi = FFT_WS(u) * d[1].r + FFT_WS(u2) * d[2].r;
                size_t q = u2, m = 3;
                for (; m + 1 <= h; m += 2) {
                    q += u;
                    if (q > p) q -= p;
                    size_t q2 = q + u;
                    if (q2 > p) q2 -= p;
                    car += s[m].r * FFT_WC(q) + s[m + 1].r * FFT_WC(q2);
                    cai += s[m].i * FFT_WC(q) + s[m + 1].i * FFT_WC(q2);
                    cbr -= d[m].i * FFT_WS(q) + d[m + 1].i * FFT_WS(q2);
                    cbi += d[m].r * FFT_WS(q) + d[m + 1].r * FFT_WS(q2);
                    q = q2;
                }
                for (; m <= h; m++) {
                    q += u;
                    if (q > p) q -= p;
                    car += s[m].r * FFT_WC(q);
                    cai += s[m].i * FFT_WC(q);
                    cbr -= d[m].i * FFT_WS(q);
                    cbi += d[m].r * FFT_WS(q);
                }
                FFT_PUT(i, k, u, ((FFT_(cplx)){car + cbr, cai + cbi}));
                FFT_PUT(i, k, p - u, ((FFT_(cplx)){car - cbr, cai - cbi}));
            }
        }
#undef FFT_WS
#undef FFT_WC
}

#undef FFT_PUT
#undef FFT_WA
#undef FFT_CH
#undef FFT_CC

/* Work space of fft_exec in complex values. */
static size_t FFT_(scratch_len)(const FFT_(plan) *pl) {
    if (pl->sub) return pl->n2 + FFT_(scratch_len)(pl->sub);
    size_t maxp = 1;
    for (int f = 0; f < pl->nfct; f++)
        if (pl->fct[f] > maxp) maxp = pl->fct[f];
    return pl->n + maxp;   /* the ping-pong buffer and the odd-radix sums */
}

/* c = fct * DFT(c) (forward: exp(-2 pi i k n / N)) in place. */
static void FFT_(exec)(const FFT_(plan) *pl, FFT_(cplx) *c, FFT_(cplx) *scratch, FFT_REAL fct, bool fwd);

static void FFT_(exec_radix)(const FFT_(plan) *pl, FFT_(cplx) *c, FFT_(cplx) *scratch, FFT_REAL fct, bool fwd) {
    const size_t n = pl->n;
    FFT_(cplx) *p1 = c, *p2 = scratch, *sd = scratch + n;
    size_t l1 = 1;
    for (int f = 0; f < pl->nfct; f++) {
        size_t ip = pl->fct[f], ido = n / (l1 * ip);
        if (ip == 2) FFT_(pass2)(ido, l1, p1, p2, pl->tw[f], fwd);
        else if (ip == 4) FFT_(pass4)(ido, l1, p1, p2, pl->tw[f], fwd);
        else if (ip == 8) FFT_(pass8)(ido, l1, p1, p2, pl->tw[f], fwd);
        else if (ip <= 11) FFT_(pass_odd)(ido, l1, ip, p1, p2, pl->tw[f], pl->cs[f], fwd, sd);
        else FFT_(pass_big)(ido, l1, ip, p1, p2, pl->tw[f], pl->cs[f], fwd, sd);
        FFT_(cplx) *t = p1;
        p1 = p2;
        p2 = t;
        l1 *= ip;
    }
    if (p1 != c) {
        for (size_t i = 0; i < n; i++) c[i] = (FFT_(cplx)){p1[i].r * fct, p1[i].i * fct};
    } else if (fct != 1) {
        for (size_t i = 0; i < n; i++) c[i] = (FFT_(cplx)){c[i].r * fct, c[i].i * fct};
    }
}

static void FFT_(exec_bluestein)(const FFT_(plan) *pl, FFT_(cplx) *c, FFT_(cplx) *scratch, FFT_REAL fct,
                                 bool fwd) {
    const size_t n = pl->n, n2 = pl->n2;
    FFT_(cplx) *a = scratch, *rest = scratch + n2;
    for (size_t m = 0; m < n; m++) a[m] = FFT_(twmul)(c[m], pl->bk[m], fwd);
    for (size_t m = n; m < n2; m++) a[m] = (FFT_(cplx)){0, 0};
    FFT_(exec)(pl->sub, a, rest, 1, true);
    for (size_t m = 0; m < n2; m++) {   /* the kernel's spectrum is symmetric: half is stored */
        size_t j = m <= n2 / 2 ? m : n2 - m;
        a[m] = FFT_(twmul)(a[m], pl->bkf[j], !fwd);
    }
    FFT_(exec)(pl->sub, a, rest, 1, false);
    for (size_t m = 0; m < n; m++) {
        FFT_(cplx) v = FFT_(twmul)(a[m], pl->bk[m], fwd);
        c[m] = (FFT_(cplx)){v.r * fct, v.i * fct};
    }
}

static void FFT_(exec)(const FFT_(plan) *pl, FFT_(cplx) *c, FFT_(cplx) *scratch, FFT_REAL fct, bool fwd) {
    if (pl->sub) FFT_(exec_bluestein)(pl, c, scratch, fct, fwd);
    else if (pl->n == 1) c[0] = (FFT_(cplx)){c[0].r * fct, c[0].i * fct};
    else FFT_(exec_radix)(pl, c, scratch, fct, fwd);
}

static void FFT_(plan_free)(FFT_(plan) *pl) {
    if (!pl) return;
    FFT_(plan_free)(pl->sub);
    free(pl->mem);
    free(pl);
}

static inline FFT_(cplx) FFT_(root)(size_t idx, size_t n) {
    double c, s;
    fft_unit_root(idx, n, &c, &s);
    return (FFT_(cplx)){(FFT_REAL)c, (FFT_REAL)s};
}

static onyx_status *FFT_(plan_new)(size_t n, FFT_(plan) **out);

/* Mixed radix: factors, then the twiddles of every pass and the cosines
 * and sines of the odd radices. */
static onyx_status *FFT_(plan_radix)(FFT_(plan) *pl) {
    const size_t n = pl->n;
    pl->nfct = fft_factorize(n, pl->fct);
    size_t words = 0, l1 = 1;
    for (int f = 0; f < pl->nfct; f++) {
        size_t ip = pl->fct[f], ido = n / (l1 * ip);
        words += (ip - 1) * (ido - 1) + (ip & 1 ? (ip - 1) / 2 : 0);
        l1 *= ip;
    }
    pl->mem = malloc((words ? words : 1) * sizeof(FFT_(cplx)));
    if (!pl->mem) return ONYX_OOM();
    FFT_(cplx) *m = pl->mem;
    l1 = 1;
    for (int f = 0; f < pl->nfct; f++) {
        size_t ip = pl->fct[f], ido = n / (l1 * ip);
        pl->tw[f] = m;
        for (size_t j = 1; j < ip; j++)
            for (size_t i = 1; i < ido; i++) *m++ = FFT_(root)(j * l1 * i, n);
        if (ip & 1) {
            pl->cs[f] = m;
            for (size_t k = 1; k <= (ip - 1) / 2; k++) *m++ = FFT_(root)(k, ip);
        }
        l1 *= ip;
    }
    return NULL;
}

/* Bluestein: bk[m] = exp(i pi m^2 / n) (m^2 mod 2n kept exact), and the
 * forward FFT of the kernel bk[|j|] / n2 (its symmetric half). */
static onyx_status *FFT_(plan_bluestein)(FFT_(plan) *pl) {
    const size_t n = pl->n, n2 = fft_good_size(2 * n - 1);
    pl->n2 = n2;
    ONYX_TRY(FFT_(plan_new)(n2, &pl->sub));
    pl->mem = malloc((n + n2 / 2 + 1) * sizeof(FFT_(cplx)));
    FFT_(cplx) *tmp = malloc(n2 * sizeof(FFT_(cplx)));
    FFT_(cplx) *scr = malloc(FFT_(scratch_len)(pl->sub) * sizeof(FFT_(cplx)));
    if (!pl->mem || !tmp || !scr) {
        free(tmp);
        free(scr);
        return ONYX_OOM();
    }
    pl->bk = pl->mem;
    pl->bkf = pl->mem + n;
    size_t coeff = 0;
    pl->bk[0] = (FFT_(cplx)){1, 0};
    for (size_t m = 1; m < n; m++) {
        coeff += 2 * m - 1;   /* m^2 - (m-1)^2 */
        if (coeff >= 2 * n) coeff -= 2 * n;
        pl->bk[m] = FFT_(root)(coeff, 2 * n);
    }
    const FFT_REAL scale = (FFT_REAL)1 / (FFT_REAL)n2;
    for (size_t m = 0; m < n2; m++) tmp[m] = (FFT_(cplx)){0, 0};
    tmp[0] = (FFT_(cplx)){pl->bk[0].r * scale, pl->bk[0].i * scale};
    for (size_t m = 1; m < n; m++)
        tmp[m] = tmp[n2 - m] = (FFT_(cplx)){pl->bk[m].r * scale, pl->bk[m].i * scale};
    FFT_(exec)(pl->sub, tmp, scr, 1, true);
    for (size_t m = 0; m <= n2 / 2; m++) pl->bkf[m] = tmp[m];
    free(tmp);
    free(scr);
    return NULL;
}

static onyx_status *FFT_(plan_new)(size_t n, FFT_(plan) **out) {
    *out = NULL;
    if (n == 0) return ONYX_INVALID_ARG("FFT length must be positive");
    FFT_(plan) *pl = calloc(1, sizeof *pl);
    if (!pl) return ONYX_OOM();
    pl->n = n;
    onyx_status *st = NULL;
    if (n > 1) st = fft_use_bluestein(n) ? FFT_(plan_bluestein)(pl) : FFT_(plan_radix)(pl);
    if (st) {
        FFT_(plan_free)(pl);
        return st;
    }
    *out = pl;
    return NULL;
}

/* ------------------------------------------------------------ line loops of signal.c */

/* Input line t of a DFT: the signal along the axis, truncated or
 * zero-padded to the transform length; for IRFFT bins 0 .. N/2 extended
 * by conjugate symmetry. */
static void FFT_(fill_dft)(const dft_job *j, size_t t, FFT_(cplx) *c) {
    const int64_t o = (int64_t)t / j->inner, i = (int64_t)t % j->inner, N = (int64_t)j->n_fft;
    const int64_t base = (o * j->n_in * j->inner + i) * j->c_in, stride = j->inner * j->c_in;
    const int64_t take = j->irfft ? N / 2 + 1 : N, have = j->n_in < take ? j->n_in : take;
    for (int64_t k = 0; k < have; k++) {
        c[k].r = (FFT_REAL)sig_load(j->dtype, j->x, base + k * stride);
        c[k].i = j->c_in == 2 ? (FFT_REAL)sig_load(j->dtype, j->x, base + k * stride + 1) : (FFT_REAL)0;
    }
    for (int64_t k = have; k < take; k++) c[k] = (FFT_(cplx)){0, 0};
    if (j->irfft) {   /* the imaginary parts of bins 0 and N/2 do not reach a real signal */
        c[0].i = 0;
        if (N % 2 == 0) c[N / 2].i = 0;
    }
    for (int64_t k = take; k < N; k++) c[k] = (FFT_(cplx)){c[N - k].r, -c[N - k].i};
}

/* Input line t of an STFT: frame f of batch b times the window, zero past
 * the signal's end, truncated or zero-padded to the transform length. */
static void FFT_(fill_stft)(const dft_job *j, size_t t, FFT_(cplx) *c) {
    const int64_t b = (int64_t)t / j->frames, f = (int64_t)t % j->frames, N = (int64_t)j->n_fft;
    const int64_t begin = f * j->step, w = j->win_len < N ? j->win_len : N;
    for (int64_t k = 0; k < N; k++) {
        int64_t pos = begin + k;
        if (k >= w || pos >= j->sig_len) {
            c[k] = (FFT_(cplx)){0, 0};
            continue;
        }
        int64_t e = (b * j->sig_len + pos) * j->c_in;
        FFT_REAL re = (FFT_REAL)sig_load(j->dtype, j->x, e);
        FFT_REAL im = j->c_in == 2 ? (FFT_REAL)sig_load(j->dtype, j->x, e + 1) : 0;
        if (j->window) {
            FFT_REAL wk = (FFT_REAL)sig_load(j->dtype, j->window, k);
            re = re * wk;
            im = im * wk;
        }
        c[k] = (FFT_(cplx)){re, im};
    }
}

/* Output line t: the first n_out bins, complex or (IRFFT) real parts. */
static void FFT_(emit)(const dft_job *j, size_t t, const FFT_(cplx) *c) {
    int64_t base, stride;
    if (j->stft) {
        base = (int64_t)t * j->n_out * 2;
        stride = 2;
    } else {
        const int64_t o = (int64_t)t / j->inner, i = (int64_t)t % j->inner;
        base = (o * j->n_out * j->inner + i) * j->c_out;
        stride = j->inner * j->c_out;
    }
    for (int64_t k = 0; k < j->n_out; k++) {
        sig_store(j->dtype, j->y, base + k * stride, c[k].r);
        if (j->c_out == 2) sig_store(j->dtype, j->y, base + k * stride + 1, c[k].i);
    }
}

/* Lines [begin, end) of the job (a task of the thread pool). */
static void FFT_(lines)(void *arg, size_t begin, size_t end) {
    dft_job *j = arg;
    const FFT_(plan) *pl = j->plan;
    FFT_(cplx) *c = malloc(j->n_fft * sizeof *c);
    FFT_(cplx) *scratch = malloc(FFT_(scratch_len)(pl) * sizeof *scratch);
    if (!c || !scratch) {
        atomic_store(&j->failed, true);
    } else {
        const FFT_REAL fct = j->inverse ? (FFT_REAL)(1.0 / (double)j->n_fft) : (FFT_REAL)1;
        for (size_t t = begin; t < end; t++) {
            if (j->stft) FFT_(fill_stft)(j, t, c);
            else FFT_(fill_dft)(j, t, c);
            FFT_(exec)(pl, c, scratch, fct, !j->inverse);
            FFT_(emit)(j, t, c);
        }
    }
    free(c);
    free(scratch);
}
