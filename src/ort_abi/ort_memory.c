/* Memory information and allocators. onyx runs on host memory, so every
 * OrtMemoryInfo describes the CPU; the default allocator is a real
 * OrtAllocator struct because clients call its members directly (the node
 * binding frees input/output names through allocator->Free). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/value.h"
#include "ort_abi/ort_abi.h"

const OrtMemoryInfo ort_cpu_memory_info = {
    .name = "Cpu", .id = 0, .mem_type = OrtMemTypeDefault, .alloc_type = OrtDeviceAllocator,
    .device = OrtMemoryInfoDeviceType_CPU, .device_mem = OrtDeviceMemoryType_DEFAULT,
};

/* ---- the default allocator: onyx's 64-byte aligned host allocator ---- */
static void *cpu_alloc(OrtAllocator *self, size_t size) { return onyx_alloc(size ? size : 1); }
static void cpu_free(OrtAllocator *self, void *p) { onyx_free(p); }
static const OrtMemoryInfo *cpu_info(const OrtAllocator *self) { return &ort_cpu_memory_info; }
static OrtStatus *cpu_stats(const OrtAllocator *self, OrtKeyValuePairs **out) {
    ort_CreateKeyValuePairs(out);   /* onyx keeps no allocator statistics: an empty list */
    return *out ? NULL : ort_status(ORT_FAIL, "AllocatorGetStats: out of memory");
}
static void *cpu_alloc_on_stream(OrtAllocator *self, size_t size, OrtSyncStream *stream) {
    return cpu_alloc(self, size);
}
static OrtStatus *cpu_shrink(OrtAllocator *self) { return NULL; }

static OrtAllocator default_allocator = {
    .version = ORT_ABI_API_VERSION, .Alloc = cpu_alloc, .Free = cpu_free, .Info = cpu_info,
    .Reserve = cpu_alloc, .GetStats = cpu_stats, .AllocOnStream = cpu_alloc_on_stream,
    .Shrink = cpu_shrink,
};

OrtAllocator *ort_default_allocator(void) { return &default_allocator; }

OrtStatus *ort_alloc_string(OrtAllocator *a, const char *s, char **out) {
    if (!a) a = &default_allocator;
    size_t n = strlen(s);
    char *p = a->Alloc(a, n + 1);
    if (!p) return ort_status(ORT_FAIL, "out of memory copying a %zu-byte string", n);
    memcpy(p, s, n + 1);
    *out = p;
    return NULL;
}

OrtStatus *ort_GetAllocatorWithDefaultOptions(OrtAllocator **out) {
    ORT_ARG_CHECK(out, "GetAllocatorWithDefaultOptions", "out is NULL");
    *out = &default_allocator;
    return NULL;
}
OrtStatus *ort_CreateAllocator(const OrtSession *s, const OrtMemoryInfo *m, OrtAllocator **out) {
    ORT_ARG_CHECK(s && m && out, "CreateAllocator", "NULL argument");
    if (m->device != OrtMemoryInfoDeviceType_CPU)
        return ort_status(ORT_INVALID_ARGUMENT,
                          "CreateAllocator: no allocator for device memory '%s' (onyx sessions "
                          "use host memory)", m->name);
    *out = &default_allocator;   /* one allocator serves every session; ReleaseAllocator ignores it */
    return NULL;
}
void ort_ReleaseAllocator(OrtAllocator *a) { (void)a; }

OrtStatus *ort_AllocatorAlloc(OrtAllocator *a, size_t size, void **out) {
    ORT_ARG_CHECK(a && out, "AllocatorAlloc", "NULL argument");
    *out = a->Alloc(a, size);
    return *out ? NULL : ort_status(ORT_FAIL, "AllocatorAlloc: out of memory (%zu bytes)", size);
}
OrtStatus *ort_AllocatorFree(OrtAllocator *a, void *p) {
    ORT_ARG_CHECK(a, "AllocatorFree", "allocator is NULL");
    a->Free(a, p);
    return NULL;
}
OrtStatus *ort_AllocatorGetInfo(const OrtAllocator *a, const OrtMemoryInfo **out) {
    ORT_ARG_CHECK(a && out, "AllocatorGetInfo", "NULL argument");
    *out = a->Info(a);
    return NULL;
}

/* ---- memory info ---- */
static OrtStatus *memory_info_new(const char *name, OrtMemoryInfoDeviceType dev, int id,
                                  OrtMemType mem_type, OrtAllocatorType type,
                                  OrtMemoryInfo **out) {
    ORT_ARG_CHECK(name && out, "CreateMemoryInfo", "NULL argument");
    if (strlen(name) >= sizeof ort_cpu_memory_info.name)
        return ort_status(ORT_INVALID_ARGUMENT, "CreateMemoryInfo: name '%s' is too long", name);
    OrtMemoryInfo *m = calloc(1, sizeof *m);
    if (!m) return ort_status(ORT_FAIL, "CreateMemoryInfo: out of memory");
    strcpy(m->name, name);
    m->id = id;
    m->mem_type = mem_type;
    m->alloc_type = type;
    m->device = dev;
    *out = m;
    return NULL;
}

OrtStatus *ort_CreateMemoryInfo(const char *name, OrtAllocatorType type, int id,
                                OrtMemType mem_type, OrtMemoryInfo **out) {
    ORT_ARG_CHECK(name, "CreateMemoryInfo", "name is NULL");
    /* ORT's names: "Cpu" / "CpuInput"... are host memory; "Cuda" etc. are devices */
    OrtMemoryInfoDeviceType dev = strncmp(name, "Cpu", 3) == 0 ? OrtMemoryInfoDeviceType_CPU
                                                                : OrtMemoryInfoDeviceType_GPU;
    if (mem_type == OrtMemTypeCPUInput || mem_type == OrtMemTypeCPUOutput)
        dev = OrtMemoryInfoDeviceType_CPU;
    return memory_info_new(name, dev, id, mem_type, type, out);
}
OrtStatus *ort_CreateCpuMemoryInfo(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo **out) {
    return memory_info_new("Cpu", OrtMemoryInfoDeviceType_CPU, 0, mem_type, type, out);
}
OrtStatus *ort_CreateMemoryInfo_V2(const char *name, OrtMemoryInfoDeviceType device_type,
                                   uint32_t vendor, int32_t device_id,
                                   OrtDeviceMemoryType mem_type, size_t alignment,
                                   OrtAllocatorType type, OrtMemoryInfo **out) {
    OrtStatus *st = memory_info_new(name, device_type, device_id, OrtMemTypeDefault, type, out);
    if (!st) {
        (*out)->vendor = vendor;
        (*out)->device_mem = mem_type;
    }
    return st;
}
void ort_ReleaseMemoryInfo(OrtMemoryInfo *m) {
    if (m != &ort_cpu_memory_info) free(m);
}
OrtStatus *ort_CompareMemoryInfo(const OrtMemoryInfo *a, const OrtMemoryInfo *b, int *out) {
    ORT_ARG_CHECK(a && b && out, "CompareMemoryInfo", "NULL argument");
    int same = !strcmp(a->name, b->name) && a->id == b->id && a->mem_type == b->mem_type &&
               a->alloc_type == b->alloc_type && a->device == b->device;
    *out = same ? 0 : -1;
    return NULL;
}
OrtStatus *ort_MemoryInfoGetName(const OrtMemoryInfo *m, const char **out) {
    ORT_ARG_CHECK(m && out, "MemoryInfoGetName", "NULL argument");
    *out = m->name;
    return NULL;
}
OrtStatus *ort_MemoryInfoGetId(const OrtMemoryInfo *m, int *out) {
    ORT_ARG_CHECK(m && out, "MemoryInfoGetId", "NULL argument");
    *out = m->id;
    return NULL;
}
OrtStatus *ort_MemoryInfoGetMemType(const OrtMemoryInfo *m, OrtMemType *out) {
    ORT_ARG_CHECK(m && out, "MemoryInfoGetMemType", "NULL argument");
    *out = m->mem_type;
    return NULL;
}
OrtStatus *ort_MemoryInfoGetType(const OrtMemoryInfo *m, OrtAllocatorType *out) {
    ORT_ARG_CHECK(m && out, "MemoryInfoGetType", "NULL argument");
    *out = m->alloc_type;
    return NULL;
}
void ort_MemoryInfoGetDeviceType(const OrtMemoryInfo *m, OrtMemoryInfoDeviceType *out) {
    if (m && out) *out = m->device;
}
OrtDeviceMemoryType ort_MemoryInfoGetDeviceMemType(const OrtMemoryInfo *m) {
    return m ? m->device_mem : OrtDeviceMemoryType_DEFAULT;
}
uint32_t ort_MemoryInfoGetVendorId(const OrtMemoryInfo *m) { return m ? m->vendor : 0; }

/* ---- values whose data a caller's allocator frees (CreateTensorWithDataAndDeleter) ---- */
typedef struct deleter_entry {
    const onyx_value *value;
    OrtAllocator *deleter;
    void *data;
} deleter_entry;
static pthread_mutex_t deleter_lock = PTHREAD_MUTEX_INITIALIZER;
static deleter_entry *deleters;
static size_t n_deleters, cap_deleters;

int ort_value_set_deleter(const onyx_value *v, OrtAllocator *deleter, void *data) {
    pthread_mutex_lock(&deleter_lock);
    int ok = 1;
    if (n_deleters == cap_deleters) {
        size_t cap = cap_deleters ? cap_deleters * 2 : 16;
        deleter_entry *d = realloc(deleters, cap * sizeof *d);
        if (d) { deleters = d; cap_deleters = cap; } else ok = 0;
    }
    if (ok) deleters[n_deleters++] = (deleter_entry){v, deleter, data};
    pthread_mutex_unlock(&deleter_lock);
    return ok;
}

void ort_ReleaseValue(OrtValue *p) {
    if (!p) return;
    onyx_value *v = (onyx_value *)p;
    OrtAllocator *deleter = NULL;
    void *data = NULL;
    pthread_mutex_lock(&deleter_lock);
    for (size_t i = 0; i < n_deleters; i++)
        if (deleters[i].value == v) {
            deleter = deleters[i].deleter;
            data = deleters[i].data;
            deleters[i] = deleters[--n_deleters];
            break;
        }
    pthread_mutex_unlock(&deleter_lock);
    onyx_value_free(v);
    if (deleter) deleter->Free(deleter, data);
}
