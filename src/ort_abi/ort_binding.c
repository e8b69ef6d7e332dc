/* IoBinding over onyx's own I/O binding (onyx_io_binding_*): inputs and
 * outputs bound by name ahead of RunWithBinding, checked against the model
 * when bound. Outputs bound to a device (BindOutputToDevice) receive new
 * values at each run, kept by the binding; outputs bound to a value
 * (BindOutput) are written in place. */
#include <stdlib.h>
#include <string.h>
#include "core/value.h"
#include "ort_abi/ort_abi.h"

OrtStatus *ort_CreateIoBinding(OrtSession *s, OrtIoBinding **out) {
    ORT_ARG_CHECK(s && out, "CreateIoBinding", "NULL argument");
    OrtIoBinding *b = calloc(1, sizeof *b);
    if (!b) return ort_status(ORT_FAIL, "CreateIoBinding: out of memory");
    OrtStatus *st = ort_from_onyx(onyx_io_binding_create(s->s, &b->b));
    if (st) {
        free(b);
        return st;
    }
    b->session = s;
    *out = b;
    return NULL;
}

void ort_ClearBoundInputs(OrtIoBinding *b) { if (b) onyx_io_binding_clear_inputs(b->b); }
void ort_ClearBoundOutputs(OrtIoBinding *b) { if (b) onyx_io_binding_clear_outputs(b->b); }
void ort_ReleaseIoBinding(OrtIoBinding *b) {
    if (!b) return;
    onyx_io_binding_free(b->b);
    free(b);
}

OrtStatus *ort_BindInput(OrtIoBinding *b, const char *name, const OrtValue *v) {
    ORT_ARG_CHECK(b && name && v, "BindInput", "NULL argument");
    return ort_from_onyx(onyx_io_binding_bind_input(b->b, name, (const onyx_value *)v));
}
OrtStatus *ort_BindOutput(OrtIoBinding *b, const char *name, const OrtValue *v) {
    ORT_ARG_CHECK(b && name && v, "BindOutput", "NULL argument");
    return ort_from_onyx(onyx_io_binding_bind_output(b->b, name, (onyx_value *)v));
}
OrtStatus *ort_BindOutputToDevice(OrtIoBinding *b, const char *name, const OrtMemoryInfo *m) {
    ORT_ARG_CHECK(b && name && m, "BindOutputToDevice", "NULL argument");
    /* the ABI's tensors are host tensors (GetTensorMemoryInfo says CPU), so
     * an output left in a device's memory could not be read through it */
    if (m->device != OrtMemoryInfoDeviceType_CPU)
        return ort_status(ORT_NOT_IMPLEMENTED, "BindOutputToDevice: onyx returns outputs in host "
                          "memory; '%s' is device memory", m->name);
    return ort_from_onyx(onyx_io_binding_bind_output_to_device(b->b, name, "cpu"));
}
OrtStatus *ort_SynchronizeBoundInputs(OrtIoBinding *b) { return NULL; }   /* host memory: nothing to wait for */
OrtStatus *ort_SynchronizeBoundOutputs(OrtIoBinding *b) { return NULL; }

/* onyx's own bound run: inputs read in place, outputs bound to a value
 * written in place, the others kept by the binding until the next run. */
OrtStatus *ort_RunWithBinding(OrtSession *s, const OrtRunOptions *ro, const OrtIoBinding *cb) {
    ORT_ARG_CHECK(s && cb, "RunWithBinding", "NULL argument");
    OrtIoBinding *b = (OrtIoBinding *)cb;
    if (!onyx_io_binding_output_count(b->b))
        return ort_status(ORT_INVALID_ARGUMENT, "RunWithBinding: no outputs are bound");
    return ort_from_onyx(onyx_session_run_with_binding(s->s, ro ? ro->ro : NULL, b->b));
}

OrtStatus *ort_GetBoundOutputNames(const OrtIoBinding *b, OrtAllocator *a, char **buffer,
                                   size_t **lengths, size_t *count) {
    ORT_ARG_CHECK(b && a && buffer && lengths && count, "GetBoundOutputNames", "NULL argument");
    *buffer = NULL;
    *lengths = NULL;
    size_t n = onyx_io_binding_output_count(b->b);
    *count = n;
    if (!n) return NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += strlen(onyx_io_binding_output_name(b->b, i));
    char *buf = a->Alloc(a, total ? total : 1);
    size_t *lens = a->Alloc(a, n * sizeof *lens);
    if (!buf || !lens) {
        if (buf) a->Free(a, buf);
        if (lens) a->Free(a, lens);
        return ort_status(ORT_FAIL, "GetBoundOutputNames: out of memory");
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = onyx_io_binding_output_name(b->b, i);
        lens[i] = strlen(name);
        memcpy(buf + pos, name, lens[i]);   /* not NUL-terminated, as in ORT */
        pos += lens[i];
    }
    *buffer = buf;
    *lengths = lens;
    return NULL;
}

OrtStatus *ort_GetBoundOutputValues(const OrtIoBinding *b, OrtAllocator *a, OrtValue ***out,
                                    size_t *count) {
    ORT_ARG_CHECK(b && a && out && count, "GetBoundOutputValues", "NULL argument");
    *out = NULL;
    *count = 0;
    onyx_io_binding *ob = b->b;
    size_t n = onyx_io_binding_output_count(ob);
    if (!n) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!onyx_io_binding_output(ob, i))
            return ort_status(ORT_INVALID_ARGUMENT, "GetBoundOutputValues: output '%s' has no "
                              "value yet (call RunWithBinding first)", onyx_io_binding_output_name(ob, i));
    OrtValue **vals = a->Alloc(a, n * sizeof *vals);
    if (!vals) return ort_status(ORT_FAIL, "GetBoundOutputValues: out of memory");
    /* each returned value is the caller's to release: copies, so the binding
     * keeps its own (ORT hands out new references to shared values) */
    for (size_t i = 0; i < n; i++) {
        OrtStatus *st = ort_from_onyx(onyx_value_clone(onyx_io_binding_output(ob, i), (onyx_value **)&vals[i]));
        if (st) {
            for (size_t j = 0; j < i; j++) onyx_value_free((onyx_value *)vals[j]);
            a->Free(a, vals);
            return st;
        }
    }
    *out = vals;
    *count = n;
    return NULL;
}
