/* Mapped table rows copied on first read (see table_rows.h). */
#include "providers/cpu/kernels/table_rows.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/status.h"

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#include <unistd.h>
#define TABLE_ROWS_COPY 1
#endif

enum { ROW_ABSENT, ROW_COPYING, ROW_COPIED };

struct onyx_table_rows {
    const unsigned char *table;   /* the mapped bytes */
    size_t nbytes, rows, row_bytes;
    unsigned char *copy;          /* anonymous, rows * row_bytes; pages appear as rows are copied */
    uint8_t *state;               /* per row: ROW_* */
    uintptr_t map_lo, map_hi;     /* the table's whole pages */
    size_t span;                  /* bytes one fault may map: one page table's reach */
};

static size_t row_bytes_of(const onyx_value *t) {
    return t->dims[0] > 0 ? t->nbytes / (size_t)t->dims[0] : 0;
}

onyx_status *onyx_table_rows_new(const onyx_value *t, onyx_table_rows **out) {
    *out = NULL;
#ifdef TABLE_ROWS_COPY
    if (!t || t->kind != ONYX_VALUE_TENSOR || !(t->flags & ONYX_VALUE_MAPPED) || !t->data || t->rank < 1 ||
        t->dims[0] < 1 || t->nbytes % (size_t)t->dims[0])
        return NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), span = page * (page / sizeof(void *));
    /* rows of less than a cache line: too many rows per page for a copy by rows to pay */
    if (t->nbytes <= span || row_bytes_of(t) < 64) return NULL;
    onyx_table_rows *c = calloc(1, sizeof *c);
    if (!c) return ONYX_OOM();
    c->table = t->data;
    c->nbytes = t->nbytes;
    c->rows = (size_t)t->dims[0];
    c->row_bytes = row_bytes_of(t);
    c->span = span;
    c->map_lo = (uintptr_t)t->data & ~(uintptr_t)(page - 1);
    c->map_hi = ((uintptr_t)t->data + t->nbytes + page - 1) & ~(uintptr_t)(page - 1);
    c->state = calloc(c->rows, 1);
    void *m = mmap(NULL, t->nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    c->copy = m == MAP_FAILED ? NULL : m;
    if (!c->state || !c->copy) {
        onyx_table_rows_free(c);
        return ONYX_OOM();
    }
#ifdef MADV_NOHUGEPAGE
    (void)madvise(c->copy, t->nbytes, MADV_NOHUGEPAGE);   /* a row populates its pages, not 2 MiB */
#endif
    *out = c;
#else
    (void)t;
#endif
    return NULL;
}

const void *onyx_table_rows_get(onyx_table_rows *c, const onyx_value *t, size_t r) {
    if (!c || t->data != c->table) return (const unsigned char *)t->data + r * row_bytes_of(t);
    const unsigned char *src = c->table + r * c->row_bytes;
    unsigned char *dst = c->copy + r * c->row_bytes;
    uint8_t s = __atomic_load_n(&c->state[r], __ATOMIC_ACQUIRE);
    if (s == ROW_COPIED) return dst;
    uint8_t absent = ROW_ABSENT;
    if (s != ROW_ABSENT || !__atomic_compare_exchange_n(&c->state[r], &absent, ROW_COPYING, false,
                                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&c->state[r], __ATOMIC_ACQUIRE) == ROW_COPIED ? dst : src;
    memcpy(dst, src, c->row_bytes);
#ifdef TABLE_ROWS_COPY
    /* the fault may have mapped anything in the row's span: give it back */
    uintptr_t start = (uintptr_t)src & ~(uintptr_t)(c->span - 1),
              end = ((uintptr_t)src + c->row_bytes + c->span - 1) & ~(uintptr_t)(c->span - 1);
    if (start < c->map_lo) start = c->map_lo;
    if (end > c->map_hi) end = c->map_hi;
    onyx_release_file_pages((const void *)start, end - start);
#endif
    __atomic_store_n(&c->state[r], ROW_COPIED, __ATOMIC_RELEASE);
    return dst;
}

void onyx_table_rows_free(onyx_table_rows *c) {
    if (!c) return;
#ifdef TABLE_ROWS_COPY
    if (c->copy) munmap(c->copy, c->nbytes);
#endif
    free(c->state);
    free(c);
}
