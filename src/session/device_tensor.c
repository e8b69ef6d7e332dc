/* Device tensors of a session's providers, and copies between them and
 * host memory (the public onyx_session_device_tensor_create and
 * onyx_tensor_copy_*). Apart from I/O binding (io_binding.c), which a minimal
 * build leaves out while it keeps these. */
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "session/device_tensor.h"
#include "session/session.h"

static const onyx_provider *provider_named(const onyx_session *s, const char *name) {
    for (size_t i = 0; name && i < s->n_providers; i++)
        if (!strcmp(s->providers[i]->name, name)) return s->providers[i];
    return NULL;
}

onyx_status *onyx_session_device_of(const onyx_session *s, const char *provider, const onyx_device_mem **out) {
    const onyx_provider *p = provider_named(s, provider);
    if (!p) return ONYX_INVALID_ARG("the session runs no provider named '%s'", provider ? provider : "(null)");
    *out = p->device;
    return NULL;
}

onyx_status *onyx_session_device_tensor_create(onyx_session *s, const char *provider, onyx_element_type type,
                                               const int64_t *shape, size_t rank, onyx_value **out) {
    if (!s || !out) return ONYX_INVALID_ARG("onyx_session_device_tensor_create: NULL session or out");
    *out = NULL;
    const onyx_device_mem *d;
    ONYX_TRY(onyx_session_device_of(s, provider, &d));
    if (!d) return onyx_tensor_create(type, shape, rank, out);
    if (rank > ONYX_MAX_RANK) return ONYX_INVALID_ARG("device tensor: rank %zu is over %d", rank, ONYX_MAX_RANK);
    return onyx_device_tensor_new(d, type, (int)rank, shape, out);
}

const char *onyx_value_device_name(const onyx_value *v) { return v && v->device ? v->device->name : NULL; }

static onyx_status *check_copy(const onyx_value *v, size_t nbytes, const char *what) {
    if (!v || v->kind != ONYX_VALUE_TENSOR || v->dtype == ONYX_STRING)
        return ONYX_INVALID_ARG("%s: a numeric tensor is needed", what);
    if (nbytes != v->nbytes)
        return ONYX_INVALID_ARG("%s: the tensor holds %zu bytes, %zu given", what, v->nbytes, nbytes);
    return NULL;
}

onyx_status *onyx_tensor_copy_from_host(onyx_value *dst, const void *src, size_t nbytes) {
    ONYX_TRY(check_copy(dst, nbytes, "onyx_tensor_copy_from_host"));
    if (nbytes && !src) return ONYX_INVALID_ARG("onyx_tensor_copy_from_host: src is NULL");
    if (!dst->device) {
        if (nbytes) memcpy(dst->data, src, nbytes);
        return NULL;
    }
    return dst->device->copy(dst->device->ctx, dst->data, src, nbytes, 1);
}

onyx_status *onyx_tensor_copy_to_host(const onyx_value *src, void *dst, size_t nbytes) {
    ONYX_TRY(check_copy(src, nbytes, "onyx_tensor_copy_to_host"));
    if (nbytes && !dst) return ONYX_INVALID_ARG("onyx_tensor_copy_to_host: dst is NULL");
    if (!src->device) {
        if (nbytes) memcpy(dst, src->data, nbytes);
        return NULL;
    }
    return src->device->copy(src->device->ctx, dst, src->data, nbytes, 2);
}
