/* Provider factory: the table of providers compiled into this build. */
#include "providers/provider.h"
#include <stdlib.h>
#include <string.h>

typedef onyx_status *(*provider_factory)(const char *const *, const char *const *, size_t,
                                         onyx_provider **);

static const struct {
    const char *name;
    provider_factory create;
} factories[] = {
    {"cpu", onyx_cpu_provider_create},
};

static const char *const names[] = {"cpu", NULL};

const char *const *onyx_provider_names(void) { return names; }
const char *const *onyx_available_providers(void) { return names; }

static bool name_matches(const char *want, const char *have) {
    /* accept ONNX Runtime's spelling too: "CPUExecutionProvider" */
    if (!strcasecmp(want, have)) return true;
    size_t n = strlen(have);
    return !strncasecmp(want, have, n) && !strcmp(want + n, "ExecutionProvider");
}

onyx_status *onyx_provider_create(const char *name, const char *const *keys,
                                  const char *const *values, size_t n, onyx_provider **out) {
    for (size_t i = 0; i < sizeof factories / sizeof factories[0]; i++)
        if (name_matches(name, factories[i].name)) return factories[i].create(keys, values, n, out);
    return ONYX_INVALID_ARG("execution provider '%s' is not available in this build (available: cpu)", name);
}

void onyx_provider_destroy(onyx_provider *p) {
    if (p && p->vt->destroy) p->vt->destroy(p);
}
