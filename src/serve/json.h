/* A small, strict JSON reader (RFC 8259) and a string builder for writing.
 *
 * The reader builds a tree of js_val from a NUL-terminated text. It rejects
 * anything outside the grammar (trailing commas, NaN, comments, control
 * characters in strings, bad escapes), limits nesting to JS_MAX_DEPTH, and
 * every error names what it expected and the byte offset. Numbers keep both
 * a double and, when written without fraction or exponent, an exact int64. */
#ifndef ONYX_SERVE_JSON_H
#define ONYX_SERVE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JS_MAX_DEPTH 64

typedef enum js_type { JS_NULL, JS_BOOL, JS_NUM, JS_STR, JS_ARR, JS_OBJ } js_type;

typedef struct js_member js_member;
typedef struct js_val {
    js_type type;
    bool is_int;       /* JS_NUM written as an integer that fits int64 */
    bool b;
    double num;
    int64_t i64;
    char *str;         /* JS_STR: NUL-terminated (may hold NUL bytes: see len) */
    size_t len;        /* JS_STR bytes, JS_ARR items, JS_OBJ members */
    struct js_val *items;
    js_member *members;
} js_val;
struct js_member {
    char *key;
    js_val val;
};

/* Parse text[0..len) (text[len] must be NUL). On error returns false and
 * writes a message to err. *out is freed with js_free. */
bool js_parse(const char *text, size_t len, js_val *out, char *err, size_t err_len);
void js_free(js_val *v);

/* Member of an object (NULL if v is not an object or has no such key). */
const js_val *js_get(const js_val *v, const char *key);
const char *js_type_name(js_type t);

/* ---- writer ---- */
typedef struct sbuf {
    char *data;
    size_t len, cap;
    bool oom;          /* sticky */
} sbuf;
void sb_init(sbuf *b);
void sb_free(sbuf *b);
void sb_reserve(sbuf *b, size_t extra);
void sb_put(sbuf *b, const void *data, size_t len);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal with escapes. */
void sb_json_str(sbuf *b, const char *s);
void sb_json_strn(sbuf *b, const char *s, size_t n);
/* Numbers: shortest text that reads back to the same float / double; null
 * for NaN and infinities (JSON has no literal for them). */
void sb_json_f32(sbuf *b, float v);
void sb_json_f64(sbuf *b, double v);

#endif
