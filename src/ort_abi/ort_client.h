/* ort_client.h - for programs that use an ONNX Runtime C ABI library
 * (onyx's libonnxruntime.so.1 or ONNX Runtime's own) the way applications
 * do, through dlopen and the table only: the table type from onyx's slot
 * list and the loading of a library's table. Used by tests and benchmarks,
 * not by the library. */
#ifndef ONYX_ORT_CLIENT_H
#define ONYX_ORT_CLIENT_H

#include <dlfcn.h>
#include <stdio.h>
#include "ort_abi/ort_types.h"

struct OrtApi {
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) ret (*name) params;
#include "ort_abi/slots.h"
#undef ORT_SLOT
};

/* The table of API `version` of the library at `path`, or NULL (said on stderr). */
static inline const OrtApi *ort_client_load(const char *path, uint32_t version) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return NULL;
    }
    const OrtApiBase *(*base)(void) = (const OrtApiBase *(*)(void))dlsym(lib, "OrtGetApiBase");
    const OrtApi *api = base ? base()->GetApi(version) : NULL;
    if (!api) fprintf(stderr, "%s: no OrtApi version %u\n", path, (unsigned)version);
    return api;
}

#endif
