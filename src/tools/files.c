/* Plain helpers of the CLI with no dependency on sessions: number parsing,
 * files and paths, timing, string lists, symbolic-dimension lists. */
#include "tools/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_int(const char *s, int lo, int hi, int *out) {
    int64_t v;
    if (!cli_parse_i64(s, lo, hi, &v)) return false;
    *out = (int)v;
    return true;
}

bool cli_parse_double(const char *s, double *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

void cli_json_string(FILE *f, const char *s, size_t len) {
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

bool cli_ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

onyx_status *cli_read_file(const char *path, uint8_t **buf, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return onyx_error(errno == ENOENT ? ONYX_ERR_NO_SUCH_FILE : ONYX_ERR_FAIL,
                          "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "'%s' is not a regular file", path);
    }
    if ((uint64_t)sb.st_size > CLI_MAX_FILE_BYTES) {
        fclose(f);
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "'%s' is too large (%lld bytes)", path,
                          (long long)sb.st_size);
    }
    size_t n = (size_t)sb.st_size;
    uint8_t *b = malloc(n + 1);
    if (!b) {
        fclose(f);
        return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes)", path,
                          n);
    }
    size_t got = fread(b, 1, n, f);
    int err = ferror(f);
    fclose(f);
    if (got != n || err) {
        free(b);
        return onyx_error(ONYX_ERR_FAIL, "cannot read '%s': short read (%zu of %zu bytes)", path,
                          got, n);
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return NULL;
}

bool cli_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool cli_is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool cli_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}

char *cli_path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] != '/';
    char *p = malloc(a + slash + b + 1);
    if (!p) return NULL;
    memcpy(p, dir, a);
    if (slash) p[a] = '/';
    memcpy(p + a + slash, name, b + 1);
    return p;
}

onyx_status *cli_mkdirs(const char *path) {
    if (!*path) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "empty directory name");
    char *p = strdup(path);
    if (!p) return ONYX_OOM();
    /* create each prefix ending before a '/', then the whole path */
    for (char *s = p + 1;; s++) {
        bool end = *s == 0;
        if (*s == '/' || end) {
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                onyx_status *st = onyx_error(ONYX_ERR_FAIL, "cannot create directory '%s': %s", p,
                                             strerror(errno));
                free(p);
                return st;
            }
            if (end) break;
            *s = '/';
        }
    }
    free(p);
    if (!cli_is_dir(path))
        return onyx_error(ONYX_ERR_FAIL, "'%s' exists and is not a directory", path);
    return NULL;
}

double cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ string list */

onyx_status *cli_strlist_add(cli_strlist *l, const char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **items = realloc(l->items, cap * sizeof *items);
        if (!items) return ONYX_OOM();
        l->items = items;
        l->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy) return ONYX_OOM();
    l->items[l->n++] = copy;
    return NULL;
}

bool cli_strlist_has(const cli_strlist *l, const char *s) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], s) == 0) return true;
    return false;
}

void cli_strlist_free(cli_strlist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------------------ dims */

bool cli_dims_add(cli_dims *d, const char *spec, char sep) {
    const char *eq = strrchr(spec, sep);
    int64_t v;
    if (!eq || eq == spec || !cli_parse_i64(eq + 1, 0, INT64_C(1) << 40, &v)) return false;
    size_t n = (size_t)(eq - spec);
    for (size_t i = 0; i < d->n; i++) {
        if (strlen(d->items[i].name) == n && memcmp(d->items[i].name, spec, n) == 0) {
            d->items[i].value = v;
            return true;
        }
    }
    cli_dim *items = realloc(d->items, (d->n + 1) * sizeof *items);
    if (!items) return false;
    d->items = items;
    char *name = strndup(spec, n);
    if (!name) return false;
    d->items[d->n].name = name;
    d->items[d->n].value = v;
    d->n++;
    return true;
}

int64_t cli_dims_get(const cli_dims *d, const char *name, int64_t fallback) {
    if (!name) return fallback;
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->items[i].name, name) == 0) return d->items[i].value;
    return fallback;
}

void cli_dims_free(cli_dims *d) {
    for (size_t i = 0; i < d->n; i++) free(d->items[i].name);
    free(d->items);
    memset(d, 0, sizeof *d);
}
