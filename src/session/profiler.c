#include "session/profiler.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int64_t onyx_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

onyx_profiler *onyx_profiler_create(const char *path) {
    onyx_profiler *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->path = strdup(path && path[0] ? path : "onyx_profile.json");
    if (!p->path) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    p->t0_ns = onyx_now_ns();
    p->pid = (int)getpid();
    return p;
}

void onyx_profiler_free(onyx_profiler *p) {
    if (!p) return;
    pthread_mutex_destroy(&p->lock);
    free(p->path);
    free(p->buf);
    free(p);
}

/* Append formatted text; caller holds the lock. Drops text on OOM. */
static void append(onyx_profiler *p, const char *fmt, ...) {
    va_list ap;
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t room = p->cap - p->len;
        va_start(ap, fmt);
        int n = vsnprintf(p->buf ? p->buf + p->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if ((size_t)n < room) {
            p->len += (size_t)n;
            return;
        }
        size_t cap = (p->cap + (size_t)n + 1) * 2;
        char *b = realloc(p->buf, cap);
        if (!b) return;
        p->buf = b;
        p->cap = cap;
    }
}

static void event_head(onyx_profiler *p, const char *cat, int64_t start_ns, int64_t end_ns) {
#ifdef SYS_gettid
    long tid = syscall(SYS_gettid);
#else
    long tid = 0;   /* one thread (WebAssembly) */
#endif
    append(p, "%s{\"cat\":\"%s\",\"pid\":%d,\"tid\":%ld,\"dur\":%lld,\"ts\":%lld,\"ph\":\"X\",\"name\":\"",
           p->len ? ",\n" : "", cat, p->pid, tid, (long long)((end_ns - start_ns) / 1000),
           (long long)((start_ns - p->t0_ns) / 1000));
}

static void append_json_string(onyx_profiler *p, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') append(p, "\\%c", c);
        else if (c < 0x20) append(p, "\\u%04x", c);
        else append(p, "%c", c);
    }
}

void onyx_profiler_session_event(onyx_profiler *p, const char *name, int64_t start_ns, int64_t end_ns) {
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    event_head(p, "Session", start_ns, end_ns);
    append_json_string(p, name);
    append(p, "\",\"args\":{}}");
    pthread_mutex_unlock(&p->lock);
}

static void append_type_shapes(onyx_profiler *p, const onyx_value *const *vals, size_t n) {
    append(p, "[");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        const onyx_value *v = vals[i];
        if (!v || v->kind != ONYX_VALUE_TENSOR) continue;
        /* ONNX Runtime's spelling: float, double, int64, ... */
        const char *tn = v->dtype == ONYX_FLOAT ? "float" : v->dtype == ONYX_DOUBLE ? "double"
                                                                            : onyx_dtype_name(v->dtype);
        append(p, "%s{\"%s\":[", first ? "" : ",", tn);
        for (int d = 0; d < v->rank; d++) append(p, d ? ",%lld" : "%lld", (long long)v->dims[d]);
        append(p, "]}");
        first = false;
    }
    append(p, "]");
}

static size_t total_bytes(const onyx_value *const *vals, size_t n) {
    size_t b = 0;
    for (size_t i = 0; i < n; i++)
        if (vals[i]) b += vals[i]->nbytes;
    return b;
}

void onyx_profiler_node_event(onyx_profiler *p, const onyx_node *n, const char *provider,
                              const onyx_value *const *in, onyx_value *const *out,
                              int64_t start_ns, int64_t end_ns) {
    if (!p) return;
    char pname[64];
    /* ONNX Runtime names providers "CPUExecutionProvider" */
    snprintf(pname, sizeof pname, "%s", provider);
    for (char *c = pname; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    pthread_mutex_lock(&p->lock);
    event_head(p, "Node", start_ns, end_ns);
    if (n->name[0]) append_json_string(p, n->name);
    else append(p, "%s_%u", n->op_type, n->index);
    append(p, "_kernel_time\",\"args\":{\"op_name\":\"");
    append_json_string(p, n->op_type);
    append(p, "\",\"provider\":\"%sExecutionProvider\",\"node_index\":\"%u\",", pname, n->index);
    append(p, "\"activation_size\":\"%zu\",\"output_size\":\"%zu\",\"input_type_shape\":",
           total_bytes(in, n->n_in), total_bytes((const onyx_value *const *)out, n->n_out));
    append_type_shapes(p, in, n->n_in);
    append(p, ",\"output_type_shape\":");
    append_type_shapes(p, (const onyx_value *const *)out, n->n_out);
    append(p, "}}");
    pthread_mutex_unlock(&p->lock);
}

onyx_status *onyx_profiler_write(onyx_profiler *p, const char **path_out) {
    if (!p) return ONYX_INVALID_ARG("profiling is not enabled for this session");
    FILE *f = fopen(p->path, "w");
    if (!f) return onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot write the profile to '%s'", p->path);
    pthread_mutex_lock(&p->lock);
    fputs("[\n", f);
    if (p->len) fwrite(p->buf, 1, p->len, f);
    fputs("\n]\n", f);
    pthread_mutex_unlock(&p->lock);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) return onyx_error(ONYX_ERR_FAIL, "error writing the profile '%s'", p->path);
    if (path_out) *path_out = p->path;
    return NULL;
}
