/* The profiler: Chrome-trace "complete" events in ONNX Runtime's format
 * (session events plus one cat:"Node" event per node run), so the same
 * viewers (chrome://tracing, Perfetto) and scripts work. Events are kept in
 * memory and written by onyx_session_end_profiling. */
#ifndef ONYX_SESSION_PROFILER_H
#define ONYX_SESSION_PROFILER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "ir/graph.h"

typedef struct onyx_profiler {
    pthread_mutex_t lock;
    char *path;
    int64_t t0_ns;          /* session start: event times are relative to it */
    char *buf;              /* comma-separated JSON events */
    size_t len, cap;
    int pid;
} onyx_profiler;

onyx_profiler *onyx_profiler_create(const char *path);
void onyx_profiler_free(onyx_profiler *p);
int64_t onyx_now_ns(void);
void onyx_profiler_session_event(onyx_profiler *p, const char *name, int64_t start_ns, int64_t end_ns);
void onyx_profiler_node_event(onyx_profiler *p, const onyx_node *n, const char *provider,
                              const onyx_value *const *in, onyx_value *const *out,
                              int64_t start_ns, int64_t end_ns);
onyx_status *onyx_profiler_write(onyx_profiler *p, const char **path_out);

#endif
