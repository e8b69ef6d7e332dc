/* IoBinding: inputs and outputs bound by name ahead of RunWithBinding.
 * Outputs bound to a device (BindOutputToDevice) receive new values at each
 * run; outputs bound to a value (BindOutput) are written in place. */
#include <stdlib.h>
#include <string.h>
#include "core/value.h"
#include "ort_abi/ort_abi.h"

OrtStatus *ort_CreateIoBinding(OrtSession *s, OrtIoBinding **out) {
    ORT_ARG_CHECK(s && out, "CreateIoBinding", "NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out) return ort_status(ORT_FAIL, "CreateIoBinding: out of memory");
    (*out)->session = s;
    return NULL;
}

static void clear(ort_binding_entry **list, size_t *n, int free_values) {
    for (size_t i = 0; i < *n; i++) {
        free((*list)[i].name);
        if (free_values && !(*list)[i].preallocated) onyx_value_free((*list)[i].value);
    }
    free(*list);
    *list = NULL;
    *n = 0;
}

void ort_ClearBoundInputs(OrtIoBinding *b) { if (b) clear(&b->in, &b->n_in, 0); }
void ort_ClearBoundOutputs(OrtIoBinding *b) { if (b) clear(&b->out, &b->n_out, 1); }
void ort_ReleaseIoBinding(OrtIoBinding *b) {
    if (!b) return;
    ort_ClearBoundInputs(b);
    ort_ClearBoundOutputs(b);
    free(b);
}

static int has_name(const char *name, const char *(*get)(const onyx_session *, size_t),
                    size_t n, const onyx_session *s) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(get(s, i), name)) return 1;
    return 0;
}

/* Add or replace the entry for `name`. */
static OrtStatus *bind(ort_binding_entry **list, size_t *n, const char *name, onyx_value *v,
                       int preallocated, int free_old) {
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*list)[i].name, name)) {
            if (free_old && !(*list)[i].preallocated) onyx_value_free((*list)[i].value);
            (*list)[i].value = v;
            (*list)[i].preallocated = preallocated;
            return NULL;
        }
    ort_binding_entry *l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l) return ort_status(ORT_FAIL, "IoBinding: out of memory");
    *list = l;
    char *nm = strdup(name);
    if (!nm) return ort_status(ORT_FAIL, "IoBinding: out of memory");
    l[(*n)++] = (ort_binding_entry){nm, v, preallocated};
    return NULL;
}

OrtStatus *ort_BindInput(OrtIoBinding *b, const char *name, const OrtValue *v) {
    ORT_ARG_CHECK(b && name && v, "BindInput", "NULL argument");
    const onyx_session *s = b->session->s;
    if (!has_name(name, onyx_session_input_name, onyx_session_input_count(s), s))
        return ort_status(ORT_INVALID_ARGUMENT, "BindInput: the model has no input '%s'", name);
    return bind(&b->in, &b->n_in, name, (onyx_value *)v, 1, 0);
}
static OrtStatus *output_check(const char *fn, OrtIoBinding *b, const char *name) {
    const onyx_session *s = b->session->s;
    if (!has_name(name, onyx_session_output_name, onyx_session_output_count(s), s))
        return ort_status(ORT_INVALID_ARGUMENT, "%s: the model has no output '%s'", fn, name);
    return NULL;
}
OrtStatus *ort_BindOutput(OrtIoBinding *b, const char *name, const OrtValue *v) {
    ORT_ARG_CHECK(b && name && v, "BindOutput", "NULL argument");
    OrtStatus *st = output_check("BindOutput", b, name);
    return st ? st : bind(&b->out, &b->n_out, name, (onyx_value *)v, 1, 1);
}
OrtStatus *ort_BindOutputToDevice(OrtIoBinding *b, const char *name, const OrtMemoryInfo *m) {
    ORT_ARG_CHECK(b && name && m, "BindOutputToDevice", "NULL argument");
    if (m->device != OrtMemoryInfoDeviceType_CPU)
        return ort_status(ORT_NOT_IMPLEMENTED, "BindOutputToDevice: onyx returns outputs in host "
                          "memory; '%s' is device memory", m->name);
    OrtStatus *st = output_check("BindOutputToDevice", b, name);
    return st ? st : bind(&b->out, &b->n_out, name, NULL, 0, 1);
}
OrtStatus *ort_SynchronizeBoundInputs(OrtIoBinding *b) { return NULL; }   /* host memory: nothing to wait for */
OrtStatus *ort_SynchronizeBoundOutputs(OrtIoBinding *b) { return NULL; }

OrtStatus *ort_RunWithBinding(OrtSession *s, const OrtRunOptions *ro, const OrtIoBinding *cb) {
    ORT_ARG_CHECK(s && cb, "RunWithBinding", "NULL argument");
    OrtIoBinding *b = (OrtIoBinding *)cb;
    if (!b->n_out) return ort_status(ORT_INVALID_ARGUMENT, "RunWithBinding: no outputs are bound");
    const char **in_names = malloc((b->n_in + 1) * sizeof *in_names);
    const OrtValue **ins = malloc((b->n_in + 1) * sizeof *ins);
    const char **out_names = malloc(b->n_out * sizeof *out_names);
    OrtValue **outs = calloc(b->n_out, sizeof *outs);
    OrtStatus *st = NULL;
    if (!in_names || !ins || !out_names || !outs) {
        st = ort_status(ORT_FAIL, "RunWithBinding: out of memory");
        goto done;
    }
    for (size_t i = 0; i < b->n_in; i++) {
        in_names[i] = b->in[i].name;
        ins[i] = (const OrtValue *)b->in[i].value;
    }
    for (size_t i = 0; i < b->n_out; i++) {
        out_names[i] = b->out[i].name;
        outs[i] = b->out[i].preallocated ? (OrtValue *)b->out[i].value : NULL;
    }
    st = ort_Run(s, ro, in_names, ins, b->n_in, out_names, b->n_out, outs);
    if (!st)
        for (size_t i = 0; i < b->n_out; i++)
            if (!b->out[i].preallocated) {
                onyx_value_free(b->out[i].value);
                b->out[i].value = (onyx_value *)outs[i];
            }
done:
    free(in_names);
    free(ins);
    free(out_names);
    free(outs);
    return st;
}

OrtStatus *ort_GetBoundOutputNames(const OrtIoBinding *b, OrtAllocator *a, char **buffer,
                                   size_t **lengths, size_t *count) {
    ORT_ARG_CHECK(b && a && buffer && lengths && count, "GetBoundOutputNames", "NULL argument");
    *buffer = NULL;
    *lengths = NULL;
    *count = b->n_out;
    if (!b->n_out) return NULL;
    size_t total = 0;
    for (size_t i = 0; i < b->n_out; i++) total += strlen(b->out[i].name);
    char *buf = a->Alloc(a, total ? total : 1);
    size_t *lens = a->Alloc(a, b->n_out * sizeof *lens);
    if (!buf || !lens) {
        if (buf) a->Free(a, buf);
        if (lens) a->Free(a, lens);
        return ort_status(ORT_FAIL, "GetBoundOutputNames: out of memory");
    }
    size_t pos = 0;
    for (size_t i = 0; i < b->n_out; i++) {
        lens[i] = strlen(b->out[i].name);
        memcpy(buf + pos, b->out[i].name, lens[i]);   /* not NUL-terminated, as in ORT */
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
    if (!b->n_out) return NULL;
    for (size_t i = 0; i < b->n_out; i++)
        if (!b->out[i].value)
            return ort_status(ORT_INVALID_ARGUMENT, "GetBoundOutputValues: output '%s' has no "
                              "value yet (call RunWithBinding first)", b->out[i].name);
    OrtValue **vals = a->Alloc(a, b->n_out * sizeof *vals);
    if (!vals) return ort_status(ORT_FAIL, "GetBoundOutputValues: out of memory");
    /* each returned value is the caller's to release: copies, so the binding
     * keeps its own (ORT hands out new references to shared values) */
    for (size_t i = 0; i < b->n_out; i++) {
        OrtStatus *st = ort_from_onyx(onyx_value_clone(b->out[i].value, (onyx_value **)&vals[i]));
        if (st) {
            for (size_t j = 0; j < i; j++) onyx_value_free((onyx_value *)vals[j]);
            a->Free(a, vals);
            return st;
        }
    }
    *out = vals;
    *count = b->n_out;
    return NULL;
}
