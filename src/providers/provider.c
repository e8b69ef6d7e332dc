/* Provider factory: the providers compiled into this build (the CPU) and
 * the ones loaded from shared libraries by name (libonyx_provider_NAME.so,
 * plugin.c). */
#define _GNU_SOURCE
#include "providers/provider.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const names[] = {"cpu", NULL};

const char *const *onyx_provider_names(void) { return names; }
const char *const *onyx_available_providers(void) { return names; }

static bool name_matches(const char *want, const char *have) {
    /* accept ONNX Runtime's spelling too: "CPUExecutionProvider" */
    if (!strcasecmp(want, have)) return true;
    size_t n = strlen(have);
    return !strncasecmp(want, have, n) && !strcmp(want + n, "ExecutionProvider");
}

bool onyx_provider_is_builtin(const char *name) { return name && name_matches(name, "cpu"); }

/* "CUDAExecutionProvider" -> "cuda"; false for names that are not plain words. */
static bool plugin_stem(const char *name, char *stem, size_t len) {
    size_t n = strlen(name);
    const char *suffix = "ExecutionProvider";
    if (n > strlen(suffix) && !strcmp(name + n - strlen(suffix), suffix)) n -= strlen(suffix);
    if (!n || n >= len) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
        stem[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    stem[n] = 0;
    return true;
}

static bool try_dir(const char *dir, size_t dir_len, const char *stem, char *buf, size_t len) {
    int w = snprintf(buf, len, "%.*s/libonyx_provider_%s.so", (int)dir_len, dir, stem);
    return w > 0 && (size_t)w < len && access(buf, R_OK) == 0;
}

/* Search order: $ONYX_PROVIDER_PATH (colon-separated folders), the folder
 * of the binary holding onyx (libonyx.so or an executable linking it
 * statically), then the folder of the running executable. */
bool onyx_provider_library_path(const char *name, char *buf, size_t len) {
    char stem[64];
    if (!name || !plugin_stem(name, stem, sizeof stem)) return false;
    const char *env = getenv("ONYX_PROVIDER_PATH");
    for (const char *d = env; d && *d;) {
        const char *end = strchr(d, ':');
        size_t n = end ? (size_t)(end - d) : strlen(d);
        if (n && try_dir(d, n, stem, buf, len)) return true;
        d = end ? end + 1 : NULL;
    }
    Dl_info info;
    if (dladdr((void *)onyx_provider_library_path, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash && try_dir(info.dli_fname, (size_t)(slash - info.dli_fname), stem, buf, len)) return true;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        const char *slash = strrchr(exe, '/');
        if (slash && try_dir(exe, (size_t)(slash - exe), stem, buf, len)) return true;
    }
    snprintf(buf, len, "libonyx_provider_%s.so", stem);
    return false;
}

onyx_status *onyx_provider_create(const char *name, const char *const *keys,
                                  const char *const *values, size_t n, onyx_provider **out) {
    if (onyx_provider_is_builtin(name)) return onyx_cpu_provider_create(keys, values, n, out);
    char path[4096];
    if (!onyx_provider_library_path(name, path, sizeof path))
        return onyx_error(ONYX_ERR_NO_SUCH_FILE,
                          "execution provider '%s' could not start: its library %s was not found (looked in "
                          "$ONYX_PROVIDER_PATH and next to onyx; builtin providers: cpu)", name, path);
    return onyx_provider_load(path, keys, values, n, out);
}

onyx_status *onyx_provider_create_default(onyx_provider **out) {
    return onyx_cpu_provider_create(NULL, NULL, 0, out);
}

void onyx_provider_destroy(onyx_provider *p) {
    if (p && p->vt->destroy) p->vt->destroy(p);
}
