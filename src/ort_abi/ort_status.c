/* Statuses: OrtStatus is a code and a message in one allocation; onyx's
 * error codes map onto ONNX Runtime's so bindings raise the exceptions they
 * would raise on ONNX Runtime. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ort_abi/ort_abi.h"

static OrtStatus *status_new(OrtErrorCode code, const char *msg) {
    size_t n = strlen(msg);
    OrtStatus *st = malloc(sizeof *st + n + 1);
    if (!st) return NULL;   /* ORT's convention too: NULL on OOM reads as success */
    st->code = code;
    memcpy(st->msg, msg, n + 1);
    return st;
}

OrtStatus *ort_status(OrtErrorCode code, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return status_new(code, buf);
}

static OrtErrorCode code_from_onyx(onyx_error_code c) {
    switch (c) {
    case ONYX_ERR_INVALID_ARGUMENT: return ORT_INVALID_ARGUMENT;
    case ONYX_ERR_NO_SUCH_FILE: return ORT_NO_SUCHFILE;
    case ONYX_ERR_INVALID_MODEL: return ORT_INVALID_GRAPH;
    case ONYX_ERR_NOT_IMPLEMENTED: return ORT_NOT_IMPLEMENTED;
    case ONYX_ERR_RUNTIME: return ORT_RUNTIME_EXCEPTION;
    case ONYX_ERR_OUT_OF_MEMORY: return ORT_FAIL;
    case ONYX_ERR_TERMINATED: return ORT_FAIL;   /* what ORT returns for a terminated run */
    default: return ORT_FAIL;
    }
}

OrtStatus *ort_from_onyx(onyx_status *st) {
    if (!st) return NULL;
    OrtStatus *r = status_new(code_from_onyx(onyx_status_code(st)), onyx_status_message(st));
    onyx_status_free(st);
    if (!r) r = status_new(ORT_FAIL, "out of memory");
    return r;
}

OrtStatus *ort_CreateStatus(OrtErrorCode code, const char *msg) {
    return status_new(code, msg ? msg : "");
}
OrtErrorCode ort_GetErrorCode(const OrtStatus *st) { return st ? st->code : ORT_OK; }
const char *ort_GetErrorMessage(const OrtStatus *st) { return st ? st->msg : ""; }
void ort_ReleaseStatus(OrtStatus *st) { free(st); }
