/* Device memory of a session's providers (device_tensor.c). */
#ifndef ONYX_SESSION_DEVICE_TENSOR_H
#define ONYX_SESSION_DEVICE_TENSOR_H

#include "session/session.h"

/* The device memory of the session's provider named `provider` (NULL for
 * host memory, the CPU's); an error when the session runs no such provider. */
onyx_status *onyx_session_device_of(const onyx_session *s, const char *provider, const onyx_device_mem **out);

#endif
