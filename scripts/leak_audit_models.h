/* leak_audit_models.h - force-included (-include) by scripts/leak_audit.py into every file the
 * clang static analyzer reads; never compiled into onyx. It models onyx's allocators so that the
 * analyzer's unix.Malloc checker follows their memory across translation units: a status from
 * onyx_error is a fresh allocation (never NULL: the out-of-memory status is static), the int64
 * array of onyx_read_int_tensor and a value from onyx_tensor_new/_wrap/_clone or
 * onyx_value_new_empty belong to the caller on success, and each is given back with free.
 * A leak report on a path that returns an error status is the bug class the fuzzer found in
 * TensorScatter (stop 25) and DynamicQuantizeMatMul (stop 26). */
#include <stdlib.h>
#include <string.h>
#include "core/status.h"
#include "core/value.h"
#include "ir/shape_util.h"

int leak_audit_unknown(void);   /* declared only: an unknown condition to the analyzer */

static inline onyx_status *leak_audit_error(void) {
    onyx_status *st = (onyx_status *)malloc(32);
    if (!st) abort();
    return st;
}
static inline onyx_status *leak_audit_read_int(const onyx_value *v, int64_t **vals, int64_t *count) {
    (void)v;
    if (leak_audit_unknown()) return leak_audit_error();
    *vals = (int64_t *)malloc(16);
    if (!*vals) return leak_audit_error();
    *count = leak_audit_unknown();
    return NULL;
}
static inline onyx_status *leak_audit_value(onyx_value **out) {
    if (leak_audit_unknown()) return leak_audit_error();
    *out = (onyx_value *)calloc(1, sizeof(onyx_value));
    return *out ? NULL : leak_audit_error();
}

#define onyx_error(...) leak_audit_error()
#define onyx_error_wrap(st, ...) (st)
#define onyx_status_free(st) free(st)
#define onyx_read_int_tensor(v, vals, count) leak_audit_read_int(v, vals, count)
#define onyx_tensor_new(dt, rank, dims, out) ((void)(dims), leak_audit_value(out))
#define onyx_value_clone(src, out) ((void)(src), leak_audit_value(out))
#define onyx_value_new_empty(kind) ((onyx_value *)calloc(1, sizeof(onyx_value)))
#define onyx_value_destroy(v) free(v)
#define onyx_value_free(v) free(v)
#define onyx_alloc(n) malloc(n)
#define onyx_alloc_zeroed(n) calloc(1, n)
#define onyx_free(p) free(p)
