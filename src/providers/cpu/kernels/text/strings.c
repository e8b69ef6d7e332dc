/* String operators: StringConcat (opset 20), StringSplit (opset 20),
 * StringNormalizer (opset 10) and RegexFullMatch (opset 20).
 *
 * Strings are byte strings that the spec calls UTF-8. Where a code point
 * matters (whitespace splitting, case mapping) bytes are decoded as UTF-8
 * and a byte that does not start a valid sequence is taken as one opaque
 * character, passed through unchanged: hostile bytes never fail a run.
 *
 * Case mapping uses towupper_l/towlower_l under a UTF-8 locale: the one the
 * node's `locale` attribute names when the machine has it, else C.UTF-8
 * (glibc's built-in, with full Unicode simple case mappings), so results do
 * not depend on which locales are installed.
 *
 * RegexFullMatch compiles the pattern once with PCRE2 (UTF mode, anchored at
 * both ends, `$` only at the very end as in RE2) and bounds each match's
 * work, since PCRE2 backtracks where RE2 would not. */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8
#include <locale.h>
#ifdef ONYX_HAVE_PCRE2  /* RegexFullMatch is left out without it (cpu/build_options.c) */
#include <pcre2.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>
#include "providers/cpu/kernel.h"

#define L ONYX_OPSET_LATEST

/* ------------------------------------------------------------- helpers */

static inline const char *str_bytes(const onyx_string *s) {
    return s->data && s->len ? s->data : "";
}

/* Store bytes a then b (either may be empty) as a new string in *dst. */
static onyx_status *str_store2(onyx_string *dst, const char *a, size_t la, const char *b,
                               size_t lb) {
    size_t n, total;
    if (onyx_add_overflow_size(la, lb, &n) || onyx_add_overflow_size(n, 1, &total))
        return ONYX_INVALID_ARG("string of %zu + %zu bytes is too long", la, lb);
    char *p = malloc(total);
    if (!p) return ONYX_OOM();
    if (la) memcpy(p, a, la);
    if (lb) memcpy(p + la, b, lb);
    p[n] = 0;
    free(dst->data);
    dst->data = p;
    dst->len = n;
    return NULL;
}

static onyx_status *str_store(onyx_string *dst, const char *a, size_t la) {
    return str_store2(dst, a, la, NULL, 0);
}

static onyx_status *expect_string_input(const onyx_kernel_ctx *ctx, size_t i, const char *name,
                                        const onyx_value **out) {
    const onyx_value *v = i < ctx->n_in ? ctx->in[i] : NULL;
    if (!onyx_is_tensor(v))
        return ONYX_INVALID_ARG("input %zu (%s) is required and must be a tensor", i, name);
    if (v->dtype != ONYX_STRING)
        return ONYX_INVALID_ARG("input %zu (%s) has element type %s; expected string", i, name,
                                onyx_dtype_name(v->dtype));
    *out = v;
    return NULL;
}

/* Decode one UTF-8 code point at s[0..n) (n > 0). Returns its byte length;
 * *cp is -1 for a byte that does not start a valid, shortest-form sequence
 * (the caller then treats that single byte as opaque). */
static size_t utf8_decode(const unsigned char *s, size_t n, int32_t *cp) {
    unsigned c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = (int32_t)c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        *cp = -1;
        return 1;
    }
    if (len > n) {
        *cp = -1;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = -1;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = -1;
        return 1;
    }
    *cp = (int32_t)v;
    return len;
}

/* Encode cp (a valid scalar value) into out (4 bytes); returns the length. */
static size_t utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Python's str.isspace(), which the reference StringSplit uses. */
static bool is_py_space(int32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 ||
           cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* Byte length of the whitespace character at s[0..n), or 0 if it is not one. */
static size_t space_len(const char *s, size_t n) {
    int32_t cp;
    size_t len = utf8_decode((const unsigned char *)s, n, &cp);
    return is_py_space(cp) ? len : 0;
}

/* --------------------------------------------------------- StringConcat */

static onyx_status *concat_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *y;
    ONYX_TRY(expect_string_input(ctx, 0, "X", &x));
    ONYX_TRY(expect_string_input(ctx, 1, "Y", &y));
    int64_t dims[ONYX_MAX_RANK];
    int rank;
    ONYX_TRY(onyx_broadcast_shapes(x->dims, x->rank, y->dims, y->rank, dims, &rank));
    onyx_value *z;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_STRING, rank, dims, &z));
    /* Broadcast strides: 0 along dims an input repeats. */
    int64_t sx[ONYX_MAX_RANK], sy[ONYX_MAX_RANK], tx[ONYX_MAX_RANK], ty[ONYX_MAX_RANK];
    onyx_strides(x->dims, x->rank, tx);
    onyx_strides(y->dims, y->rank, ty);
    for (int d = 0; d < rank; d++) {
        int dx = d - (rank - x->rank), dy = d - (rank - y->rank);
        sx[d] = dx >= 0 && x->dims[dx] != 1 ? tx[dx] : 0;
        sy[d] = dy >= 0 && y->dims[dy] != 1 ? ty[dy] : 0;
    }
    const onyx_string *xs = x->data, *ys = y->data;
    onyx_string *zs = z->data;
    int64_t idx[ONYX_MAX_RANK] = {0}, ox = 0, oy = 0;
    for (int64_t i = 0; i < z->numel; i++) {
        ONYX_TRY(str_store2(&zs[i], str_bytes(&xs[ox]), xs[ox].len, str_bytes(&ys[oy]),
                            ys[oy].len));
        /* advance the N-d counter, keeping the input offsets in step */
        for (int d = rank - 1; d >= 0; d--) {
            ox += sx[d], oy += sy[d];
            if (++idx[d] < dims[d]) break;
            ox -= sx[d] * dims[d], oy -= sy[d] * dims[d];
            idx[d] = 0;
        }
    }
    return NULL;
}

/* ----------------------------------------------------------- StringSplit */

typedef struct split_cfg {
    const char *delim;   /* NULL: split on whitespace runs */
    size_t delim_len;
    int64_t maxsplit;    /* < 0: no limit */
} split_cfg;

typedef struct piece {
    size_t off, len;
} piece;

static void emit_piece(piece *out, int64_t *n, size_t off, size_t len) {
    if (out) out[*n] = (piece){off, len};
    (*n)++;
}

/* Python's str.split(None, maxsplit): runs of whitespace separate, leading
 * whitespace is dropped, and the unsplit remainder keeps trailing spaces. */
static int64_t split_whitespace(const char *s, size_t n, int64_t maxsplit, piece *out) {
    int64_t count = 0, left = maxsplit < 0 ? INT64_MAX : maxsplit;
    size_t i = 0, k;
    while (left-- > 0) {
        while (i < n && (k = space_len(s + i, n - i))) i += k;
        if (i == n) return count;
        size_t j = i;
        while (i < n && !space_len(s + i, n - i)) {
            int32_t cp;
            i += utf8_decode((const unsigned char *)s + i, n - i, &cp);
        }
        emit_piece(out, &count, j, i - j);
    }
    while (i < n && (k = space_len(s + i, n - i))) i += k;
    if (i < n) emit_piece(out, &count, i, n - i);
    return count;
}

/* Python's str.split(sep, maxsplit): every delimiter separates, so empty
 * pieces are kept; always at least one piece. */
static int64_t split_delim(const char *s, size_t n, const split_cfg *c, piece *out) {
    int64_t count = 0, left = c->maxsplit < 0 ? INT64_MAX : c->maxsplit;
    size_t i = 0;
    while (left-- > 0) {
        const char *hit = memmem(s + i, n - i, c->delim, c->delim_len);
        if (!hit) break;
        size_t pos = (size_t)(hit - s);
        emit_piece(out, &count, i, pos - i);
        i = pos + c->delim_len;
    }
    emit_piece(out, &count, i, n - i);
    return count;
}

static int64_t split_string(const onyx_string *str, const split_cfg *c, piece *out) {
    const char *s = str_bytes(str);
    return c->delim ? split_delim(s, str->len, c, out) : split_whitespace(s, str->len, c->maxsplit, out);
}

static onyx_status *split_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(expect_string_input(ctx, 0, "X", &x));
    if (x->rank + 1 > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("input X has rank %d; the substrings output would exceed rank %d",
                                x->rank, ONYX_MAX_RANK);
    const onyx_attr_proto *da = onyx_node_attr(ctx->node, "delimiter");
    split_cfg cfg = {NULL, 0, onyx_attr_int(ctx->node, "maxsplit", -1)};
    if (da && da->s.len) {
        cfg.delim = (const char *)da->s.ptr;
        cfg.delim_len = da->s.len;
    }
    /* Lengths first: the substrings' last dim is the largest count. The
     * lengths output is optional. */
    onyx_value *z = NULL;
    if (ctx->n_out > 1) ONYX_TRY(onyx_kernel_output(ctx, 1, ONYX_INT64, x->rank, x->dims, &z));
    const onyx_string *xs = x->data;
    int64_t width = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t count = split_string(&xs[i], &cfg, NULL);
        if (z) ((int64_t *)z->data)[i] = count;
        if (count > width) width = count;
    }
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[x->rank] = width;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_STRING, x->rank + 1, dims, &y));
    if (y->numel == 0) return NULL;
    piece *pieces = malloc(sizeof *pieces * (size_t)width);
    if (!pieces) return ONYX_OOM();
    onyx_string *ys = y->data;
    onyx_status *st = NULL;
    for (int64_t i = 0; i < x->numel && !st; i++) {
        int64_t n = split_string(&xs[i], &cfg, pieces);
        const char *s = str_bytes(&xs[i]);
        for (int64_t k = 0; k < n && !st; k++)
            st = str_store(&ys[i * width + k], s + pieces[k].off, pieces[k].len);
        /* the padding stays "" (strings are zeroed) but must be a real string */
        for (int64_t k = n; k < width && !st; k++) st = str_store(&ys[i * width + k], "", 0);
    }
    free(pieces);
    return st;
}

/* ------------------------------------------------------ StringNormalizer */

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

typedef struct norm_state {
    int case_action;
    bool case_sensitive;
    locale_t loc;
    onyx_string *stopwords;   /* sorted; case-folded to lower when !case_sensitive */
    size_t n_stopwords;
} norm_state;

/* Map every code point of s[0..n) through towlower_l/towupper_l (to_upper
 * picks which) into a new string; invalid bytes are copied as they are. */
static onyx_status *case_map(const char *s, size_t n, bool to_upper, locale_t loc,
                             onyx_string *dst) {
    /* a code point never takes more than 4 bytes, nor fewer than 1 */
    size_t cap;
    if (onyx_mul_overflow_size(n, 4, &cap) || onyx_add_overflow_size(cap, 1, &cap))
        return ONYX_INVALID_ARG("string of %zu bytes is too long", n);
    char *out = malloc(cap);
    if (!out) return ONYX_OOM();
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        int32_t cp;
        size_t len = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        wint_t m = cp < 0 ? 0 : to_upper ? towupper_l((wint_t)cp, loc) : towlower_l((wint_t)cp, loc);
        if (cp < 0 || m > 0x10FFFF || (m >= 0xD800 && m <= 0xDFFF)) {
            memcpy(out + o, s + i, len);
            o += len;
        } else {
            o += utf8_encode((uint32_t)m, out + o);
        }
        i += len;
    }
    out[o] = 0;
    char *shrunk = realloc(out, o + 1);
    free(dst->data);
    dst->data = shrunk ? shrunk : out;
    dst->len = o;
    return NULL;
}

static int cmp_onyx_string(const void *pa, const void *pb) {
    const onyx_string *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static void norm_free(void *p) {
    norm_state *s = p;
    if (!s) return;
    for (size_t i = 0; i < s->n_stopwords; i++) free(s->stopwords[i].data);
    free(s->stopwords);
    if (s->loc) freelocale(s->loc);
    free(s);
}

/* A UTF-8 locale for case mapping: the one `name` asks for if installed
 * ("en_US" is tried as "en_US.UTF-8"), else glibc's built-in C.UTF-8. */
static locale_t open_utf8_locale(const char *name) {
    locale_t loc = (locale_t)0;
    if (name && *name && strlen(name) < 128) {
        char buf[160];
        if (!strchr(name, '.')) {
            snprintf(buf, sizeof buf, "%s.UTF-8", name);
            loc = newlocale(LC_CTYPE_MASK, buf, (locale_t)0);
        } else if (strcasestr(name, "utf-8") || strcasestr(name, "utf8")) {
            loc = newlocale(LC_CTYPE_MASK, name, (locale_t)0);
        }
    }
    if (!loc) loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    return loc;
}

static onyx_status *norm_init(const onyx_kernel_info *info, void **state) {
    const onyx_node *node = info->node;
    const char *action = onyx_attr_string(node, "case_change_action", "NONE");
    int act;
    if (!strcmp(action, "NONE")) act = CASE_NONE;
    else if (!strcmp(action, "LOWER")) act = CASE_LOWER;
    else if (!strcmp(action, "UPPER")) act = CASE_UPPER;
    else
        return ONYX_INVALID_MODEL("attribute case_change_action is '%s'; expected LOWER, UPPER or NONE",
                                  action);
    norm_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->case_action = act;
    s->case_sensitive = onyx_attr_int(node, "is_case_sensitive", 0) != 0;
    s->loc = open_utf8_locale(onyx_attr_string(node, "locale", NULL));
    if (!s->loc) {
        norm_free(s);
        return ONYX_RUNTIME_ERROR("no UTF-8 locale (not even C.UTF-8) is available for case mapping");
    }
    const onyx_attr_proto *sw = onyx_node_attr(node, "stopwords");
    size_t n = sw ? sw->n_strings : 0;
    s->stopwords = n ? calloc(n, sizeof *s->stopwords) : NULL;
    if (n && !s->stopwords) {
        norm_free(s);
        return ONYX_OOM();
    }
    onyx_status *st = NULL;
    for (size_t i = 0; i < n && !st; i++, s->n_stopwords++) {
        const char *w = (const char *)sw->strings[i].ptr;
        size_t len = sw->strings[i].len;
        st = s->case_sensitive ? str_store(&s->stopwords[i], w ? w : "", len)
                               : case_map(w ? w : "", len, false, s->loc, &s->stopwords[i]);
    }
    if (st) {
        norm_free(s);
        return st;
    }
    if (s->n_stopwords) qsort(s->stopwords, s->n_stopwords, sizeof *s->stopwords, cmp_onyx_string);
    *state = s;
    return NULL;
}

static onyx_status *is_stopword(const norm_state *s, const onyx_string *w, bool *out) {
    *out = false;
    if (!s->n_stopwords) return NULL;
    onyx_string key = {(char *)str_bytes(w), w->len}, folded = {NULL, 0};
    if (!s->case_sensitive) {
        ONYX_TRY(case_map(key.data, key.len, false, s->loc, &folded));
        key = folded;
    }
    *out = bsearch(&key, s->stopwords, s->n_stopwords, sizeof key, cmp_onyx_string) != NULL;
    free(folded.data);
    return NULL;
}

static onyx_status *norm_compute(onyx_kernel_ctx *ctx) {
    const norm_state *s = ctx->state;
    const onyx_value *x;
    ONYX_TRY(expect_string_input(ctx, 0, "X", &x));
    char buf[160];
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
        return ONYX_INVALID_ARG("input X has shape %s; expected [C] or [1, C]",
                                onyx_shape_str(x->dims, x->rank, buf, sizeof buf));
    const onyx_string *xs = x->data;
    bool *keep = malloc(x->numel ? (size_t)x->numel : 1);
    if (!keep) return ONYX_OOM();
    int64_t kept = 0;
    onyx_status *st = NULL;
    for (int64_t i = 0; i < x->numel && !st; i++) {
        bool stop;
        st = is_stopword(s, &xs[i], &stop);
        keep[i] = !stop;
        kept += !stop;
    }
    /* Everything dropped: one empty string, [1] or [1, 1]. */
    int64_t dims[2] = {1, kept ? kept : 1};
    onyx_value *y = NULL;
    if (!st) st = x->rank == 1 ? onyx_kernel_output(ctx, 0, ONYX_STRING, 1, dims + 1, &y)
                               : onyx_kernel_output(ctx, 0, ONYX_STRING, 2, dims, &y);
    onyx_string *ys = y ? y->data : NULL;
    if (!st && !kept) st = str_store(&ys[0], "", 0);
    for (int64_t i = 0, o = 0; i < x->numel && !st; i++) {
        if (!keep[i]) continue;
        const char *w = str_bytes(&xs[i]);
        st = s->case_action == CASE_NONE ? str_store(&ys[o], w, xs[i].len)
                                         : case_map(w, xs[i].len, s->case_action == CASE_UPPER,
                                                    s->loc, &ys[o]);
        o++;
    }
    free(keep);
    return st;
}

/* -------------------------------------------------------- RegexFullMatch */
#ifdef ONYX_HAVE_PCRE2

/* Work bounds for one match: backtracking steps and nesting depth. RE2 runs
 * in linear time; these keep a pathological pattern from hanging a run. */
#define REGEX_MATCH_LIMIT 10000000u
#define REGEX_DEPTH_LIMIT 100000u

typedef struct regex_state {
    pcre2_code *code;
    pcre2_match_context *mctx;
} regex_state;

static void regex_free(void *p) {
    regex_state *s = p;
    if (!s) return;
    pcre2_match_context_free(s->mctx);
    pcre2_code_free(s->code);
    free(s);
}

static onyx_status *regex_init(const onyx_kernel_info *info, void **state) {
    const onyx_attr_proto *pa = onyx_node_attr(info->node, "pattern");
    if (!pa) return ONYX_INVALID_MODEL("attribute pattern is required");
    regex_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    /* RE2 semantics: UTF-8, `$` only at the end, no \C; full match = anchored
     * at both ends. Subjects with invalid UTF-8 simply fail to match. */
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED |
                    PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C;
    int err;
    PCRE2_SIZE off;
    s->code = pcre2_compile(pa->s.ptr ? pa->s.ptr : (PCRE2_SPTR) "", pa->s.len, opts, &err, &off, NULL);
    if (!s->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        regex_free(s);
        return ONYX_INVALID_MODEL("attribute pattern '%.200s' is not a valid regex at offset %zu: %s",
                                  (const char *)(pa->s.ptr ? pa->s.ptr : (const uint8_t *)""),
                                  (size_t)off, (const char *)msg);
    }
    pcre2_jit_compile(s->code, PCRE2_JIT_COMPLETE);  /* optional speed-up; the interpreter is the fallback */
    s->mctx = pcre2_match_context_create(NULL);
    if (!s->mctx) {
        regex_free(s);
        return ONYX_OOM();
    }
    pcre2_set_match_limit(s->mctx, REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(s->mctx, REGEX_DEPTH_LIMIT);
    *state = s;
    return NULL;
}

static onyx_status *regex_match_one(const regex_state *s, pcre2_match_data *md,
                                    const onyx_string *str, int64_t index, bool *out) {
    PCRE2_SPTR subj = (PCRE2_SPTR)str_bytes(str);
    int rc = pcre2_match(s->code, subj, str->len, 0, 0, md, s->mctx);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  /* deep pattern: the interpreter has more room */
        rc = pcre2_match(s->code, subj, str->len, 0, PCRE2_NO_JIT, md, s->mctx);
    if (rc >= 0) {
        *out = true;
    } else if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL) {
        *out = false;
    } else {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return ONYX_RUNTIME_ERROR("matching element %lld of input X failed: %s", (long long)index,
                                  (const char *)msg);
    }
    return NULL;
}

static onyx_status *regex_compute(onyx_kernel_ctx *ctx) {
    const regex_state *s = ctx->state;
    const onyx_value *x;
    ONYX_TRY(expect_string_input(ctx, 0, "X", &x));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_BOOL, x->rank, x->dims, &y));
    if (x->numel == 0) return NULL;
    /* match data is per run: the compiled code is shared by concurrent runs */
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(s->code, NULL);
    if (!md) return ONYX_OOM();
    const onyx_string *xs = x->data;
    bool *out = y->data;
    onyx_status *st = NULL;
    for (int64_t i = 0; i < x->numel && !st; i++) st = regex_match_one(s, md, &xs[i], i, &out[i]);
    pcre2_match_data_free(md);
    return st;
}

#endif

/* ---------------------------------------------------------------- table */

#define STR ONYX_T(ONYX_STRING)

const onyx_op_def onyx_ops_strings[] = {
    {"", "StringConcat", 20, L, STR, 0, NULL, NULL, concat_compute},
    {"", "StringSplit", 20, L, STR, 0, NULL, NULL, split_compute},
    {"", "StringNormalizer", 10, L, STR, 0, norm_init, norm_free, norm_compute},
#ifdef ONYX_HAVE_PCRE2
    {"", "RegexFullMatch", 20, L, STR, 0, regex_init, regex_free, regex_compute},
#endif
    {0},};
