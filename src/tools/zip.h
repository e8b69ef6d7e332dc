/* The zip container of .npz files: a bounds-checked reader (stored and
 * deflated members, zip64 records) and a writer of stored members. */
#ifndef ONYX_TOOLS_ZIP_H
#define ONYX_TOOLS_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "core/status.h"

typedef struct zip_entry {
    char *name;            /* NUL-terminated copy of the member name */
    const uint8_t *data;   /* compressed bytes inside the archive buffer */
    uint64_t csize, usize; /* compressed / uncompressed sizes */
    uint16_t method;       /* 0 stored, 8 deflated */
    uint32_t crc;
} zip_entry;

typedef struct zip_archive {
    zip_entry *entries;
    size_t n;
} zip_archive;

/* Index the members of a zip image held in memory. The archive borrows buf
 * (entries point into it). what: the file name, for messages. */
onyx_status *zip_open(const uint8_t *buf, size_t len, const char *what, zip_archive *out);
void zip_close(zip_archive *z);

/* The uncompressed bytes of a member (CRC checked). For stored members *out
 * points into the archive buffer and *owned is NULL; for deflated ones a
 * malloc'd buffer is returned in both *out and *owned (free *owned). */
onyx_status *zip_extract(const zip_entry *e, const char *what, const uint8_t **out, size_t *out_len,
                         uint8_t **owned);

/* Writer of stored members (what numpy.savez writes). */
typedef struct zip_writer_entry {
    char *name;
    uint32_t crc;
    uint64_t size, offset;
} zip_writer_entry;

typedef struct zip_writer {
    FILE *f;
    char *path;
    zip_writer_entry *entries;
    size_t n, cap;
    uint64_t pos;
} zip_writer;

onyx_status *zip_writer_open(zip_writer *w, const char *path);
/* Add one stored member whose content is the concatenation of parts. */
onyx_status *zip_writer_add(zip_writer *w, const char *name, const void *const *parts,
                            const size_t *lens, size_t n_parts);
/* Write the central directory and close. On failure the file is removed. */
onyx_status *zip_writer_finish(zip_writer *w);
/* Close and remove a partially written archive. */
void zip_writer_abort(zip_writer *w);

#endif
