/* Strict JSON reader and string builder (see json.h). Recursive descent
 * with an explicit depth bound; arrays and objects grow by doubling. */
#include "serve/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct js_parser {
    const char *s, *p, *end;
    char *err;
    size_t err_len;
    bool failed;
} js_parser;

static bool fail(js_parser *ps, const char *what) {
    if (!ps->failed)
        snprintf(ps->err, ps->err_len, "%s at offset %zu", what, (size_t)(ps->p - ps->s));
    ps->failed = true;
    return false;
}

static void skip_ws(js_parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool parse_value(js_parser *ps, js_val *v, int depth);

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    return v;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ps->p at the opening quote. The decoded string is never longer than its
 * escaped form, so one allocation of the raw length suffices. */
static bool parse_string(js_parser *ps, char **out, size_t *out_len) {
    const char *q = ++ps->p;
    while (q < ps->end && *q != '"') q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
    if (q >= ps->end) return fail(ps, "unterminated string");
    char *o = malloc((size_t)(q - ps->p) + 1);
    if (!o) return fail(ps, "out of memory");
    size_t n = 0;
    while (ps->p < q) {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) { free(o); return fail(ps, "control character in string"); }
        if (c != '\\') { o[n++] = (char)c; ps->p++; continue; }
        char e = ps->p[1];
        ps->p += 2;
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            int cp = q - ps->p >= 4 ? hex4(ps->p) : -1;
            if (cp < 0) { free(o); return fail(ps, "bad \\u escape"); }
            ps->p += 4;
            uint32_t u = (uint32_t)cp;
            if (u >= 0xD800 && u < 0xDC00 && q - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                int lo = hex4(ps->p + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    u = 0x10000 + ((u - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                    ps->p += 6;
                }
            }
            if (u >= 0xD800 && u < 0xE000) { free(o); return fail(ps, "unpaired surrogate in \\u escape"); }
            n += put_utf8(o + n, u);
            break;
        }
        default: free(o); ps->p -= 2; return fail(ps, "bad escape in string");
        }
    }
    ps->p = q + 1;
    o[n] = 0;
    *out = o;
    *out_len = n;
    return true;
}

static bool parse_number(js_parser *ps, js_val *v) {
    const char *p = ps->p, *start = p;
    bool integral = true;
    if (p < ps->end && *p == '-') p++;
    if (p < ps->end && *p == '0') p++;
    else if (p < ps->end && *p >= '1' && *p <= '9') while (p < ps->end && *p >= '0' && *p <= '9') p++;
    else return fail(ps, "bad number");
    if (p < ps->end && *p == '.') {
        integral = false;
        p++;
        if (p >= ps->end || *p < '0' || *p > '9') return fail(ps, "bad number: digit expected after '.'");
        while (p < ps->end && *p >= '0' && *p <= '9') p++;
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        integral = false;
        p++;
        if (p < ps->end && (*p == '+' || *p == '-')) p++;
        if (p >= ps->end || *p < '0' || *p > '9') return fail(ps, "bad number: digit expected in exponent");
        while (p < ps->end && *p >= '0' && *p <= '9') p++;
    }
    /* the grammar is checked; strtod/strtoll read exactly [start, p) */
    v->type = JS_NUM;
    v->num = strtod(start, NULL);
    if (integral) {
        errno = 0;
        long long ll = strtoll(start, NULL, 10);
        if (errno == 0) { v->is_int = true; v->i64 = ll; }
    }
    ps->p = p;
    return true;
}

static bool grow(void **items, size_t *cap, size_t n, size_t size) {
    if (n < *cap) return true;
    size_t nc = *cap ? *cap * 2 : 8;
    void *g = realloc(*items, nc * size);
    if (!g) return false;
    *items = g;
    *cap = nc;
    return true;
}

static bool parse_array(js_parser *ps, js_val *v, int depth) {
    size_t cap = 0;
    v->type = JS_ARR;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') { ps->p++; return true; }
    for (;;) {
        if (!grow((void **)&v->items, &cap, v->len, sizeof *v->items)) return fail(ps, "out of memory");
        memset(&v->items[v->len], 0, sizeof *v->items);
        if (!parse_value(ps, &v->items[v->len++], depth + 1)) return false;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == ']') { ps->p++; return true; }
        return fail(ps, "',' or ']' expected in array");
    }
}

static bool parse_object(js_parser *ps, js_val *v, int depth) {
    size_t cap = 0;
    v->type = JS_OBJ;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') { ps->p++; return true; }
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "string key expected in object");
        if (!grow((void **)&v->members, &cap, v->len, sizeof *v->members)) return fail(ps, "out of memory");
        js_member *m = &v->members[v->len];
        memset(m, 0, sizeof *m);
        size_t klen;
        if (!parse_string(ps, &m->key, &klen)) return false;
        v->len++;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') return fail(ps, "':' expected after object key");
        ps->p++;
        if (!parse_value(ps, &m->val, depth + 1)) return false;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == '}') { ps->p++; return true; }
        return fail(ps, "',' or '}' expected in object");
    }
}

static bool parse_literal(js_parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return fail(ps, "unexpected character");
    ps->p += n;
    return true;
}

static bool parse_value(js_parser *ps, js_val *v, int depth) {
    if (depth > JS_MAX_DEPTH) return fail(ps, "nesting deeper than 64 levels");
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps, "value expected");
    switch (*ps->p) {
    case '{': return parse_object(ps, v, depth);
    case '[': return parse_array(ps, v, depth);
    case '"': v->type = JS_STR; return parse_string(ps, &v->str, &v->len);
    case 't': v->type = JS_BOOL; v->b = true; return parse_literal(ps, "true");
    case 'f': v->type = JS_BOOL; v->b = false; return parse_literal(ps, "false");
    case 'n': v->type = JS_NULL; return parse_literal(ps, "null");
    default: return parse_number(ps, v);
    }
}

bool js_parse(const char *text, size_t len, js_val *out, char *err, size_t err_len) {
    js_parser ps = {text, text, text + len, err, err_len, false};
    memset(out, 0, sizeof *out);
    if (parse_value(&ps, out, 0)) {
        skip_ws(&ps);
        if (ps.p == ps.end) return true;
        fail(&ps, "trailing characters after the JSON value");
    }
    js_free(out);
    return false;
}

void js_free(js_val *v) {
    if (!v) return;
    if (v->type == JS_ARR)
        for (size_t i = 0; i < v->len && v->items; i++) js_free(&v->items[i]);
    if (v->type == JS_OBJ)
        for (size_t i = 0; i < v->len && v->members; i++) {
            free(v->members[i].key);
            js_free(&v->members[i].val);
        }
    free(v->items);
    free(v->members);
    free(v->str);
    memset(v, 0, sizeof *v);
}

const js_val *js_get(const js_val *v, const char *key) {
    if (!v || v->type != JS_OBJ) return NULL;
    for (size_t i = 0; i < v->len; i++)
        if (strcmp(v->members[i].key, key) == 0) return &v->members[i].val;
    return NULL;
}

const char *js_type_name(js_type t) {
    static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
    return names[t];
}

/* ---- writer ---- */

void sb_init(sbuf *b) { memset(b, 0, sizeof *b); }
void sb_free(sbuf *b) { free(b->data); sb_init(b); }

void sb_reserve(sbuf *b, size_t extra) {
    if (b->oom || b->len + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + extra + 1) nc *= 2;
    char *g = realloc(b->data, nc);
    if (!g) { b->oom = true; return; }
    b->data = g;
    b->cap = nc;
}

void sb_put(sbuf *b, const void *data, size_t len) {
    if (len == 0) return;
    sb_reserve(b, len);
    if (b->oom) return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) { sb_put(b, small, (size_t)n); return; }
    sb_reserve(b, (size_t)n);
    if (b->oom) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sb_json_strn(sbuf *b, const char *s, size_t n) {
    sb_reserve(b, n + 2);
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; sb_put(b, e, 2); }
        else if (c == '\n') sb_put(b, "\\n", 2);
        else if (c == '\t') sb_put(b, "\\t", 2);
        else if (c == '\r') sb_put(b, "\\r", 2);
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_put(b, &s[i], 1);
    }
    sb_put(b, "\"", 1);
}

void sb_json_str(sbuf *b, const char *s) { sb_json_strn(b, s ? s : "", s ? strlen(s) : 0); }

void sb_json_f32(sbuf *b, float v) {
    if (!isfinite(v)) { sb_put(b, "null", 4); return; }
    char t[32];
    int n = snprintf(t, sizeof t, "%.9g", (double)v);
    for (int prec = 6; prec < 9; prec++) {  /* shortest text that round-trips */
        char u[32];
        int m = snprintf(u, sizeof u, "%.*g", prec, (double)v);
        if (strtof(u, NULL) == v) { sb_put(b, u, (size_t)m); return; }
    }
    sb_put(b, t, (size_t)n);
}

void sb_json_f64(sbuf *b, double v) {
    if (!isfinite(v)) { sb_put(b, "null", 4); return; }
    char t[40];
    int n = snprintf(t, sizeof t, "%.15g", v);
    if (strtod(t, NULL) != v) n = snprintf(t, sizeof t, "%.17g", v);
    sb_put(b, t, (size_t)n);
}
