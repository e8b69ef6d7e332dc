/* Zip container reading and writing (APPNOTE.TXT), enough for .npz files:
 * numpy.savez writes stored members with zip64 extra fields in the local
 * headers; numpy.savez_compressed writes deflated members; archives over
 * 4 GiB use zip64 end-of-central-directory records. Every offset, size
 * and count read from the file is checked against the buffer. */
#include "tools/zip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/inflate.h"

enum {
    SIG_LOCAL = 0x04034b50,
    SIG_CENTRAL = 0x02014b50,
    SIG_EOCD = 0x06054b50,
    SIG_EOCD64 = 0x06064b50,
    SIG_EOCD64_LOCATOR = 0x07064b50,
    LOCAL_HEADER_SIZE = 30,
    CENTRAL_HEADER_SIZE = 46,
    EOCD_SIZE = 22,
    EOCD64_SIZE = 56,
    EOCD64_LOCATOR_SIZE = 20,
    ZIP64_EXTRA_ID = 1,
};

/* Deflate cannot expand data by more than about 1032:1; a larger declared
 * size is a decompression bomb or a corrupt header. */
#define MAX_DEFLATE_RATIO 1032u

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static onyx_status *bad(const char *what, const char *msg, uint64_t at) {
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: invalid zip archive: %s (at byte %llu)", what,
                      msg, (unsigned long long)at);
}

/* True if [off, off+n) lies inside [0, len). */
static bool in_range(uint64_t off, uint64_t n, size_t len) { return off <= len && n <= len - off; }

typedef struct eocd_info {
    uint64_t n_entries, cd_size, cd_offset;
    size_t eocd_at;
} eocd_info;

static onyx_status *find_eocd(const uint8_t *buf, size_t len, const char *what, size_t *at) {
    if (len < EOCD_SIZE) return bad(what, "file too small", 0);
    /* the record is followed only by a comment of at most 65535 bytes */
    size_t lowest = len - EOCD_SIZE > 65535 ? len - EOCD_SIZE - 65535 : 0;
    for (size_t i = len - EOCD_SIZE + 1; i-- > lowest;) {
        if (rd32(buf + i) == SIG_EOCD && i + EOCD_SIZE + rd16(buf + i + 20) <= len) {
            *at = i;
            return NULL;
        }
    }
    return bad(what, "no end-of-central-directory record", len);
}

static onyx_status *read_eocd64(const uint8_t *buf, size_t len, const char *what, eocd_info *e) {
    if (e->eocd_at < EOCD64_LOCATOR_SIZE)
        return bad(what, "zip64 fields without a zip64 locator", e->eocd_at);
    const uint8_t *loc = buf + e->eocd_at - EOCD64_LOCATOR_SIZE;
    if (rd32(loc) != SIG_EOCD64_LOCATOR)
        return bad(what, "zip64 fields without a zip64 locator", e->eocd_at);
    if (rd32(loc + 16) > 1) return bad(what, "multi-disk archives are not supported", e->eocd_at);
    uint64_t rec = rd64(loc + 8);
    if (!in_range(rec, EOCD64_SIZE, len) || rd32(buf + rec) != SIG_EOCD64)
        return bad(what, "zip64 end-of-central-directory record out of range", rec);
    const uint8_t *p = buf + rec;
    if (rd32(p + 16) != 0 || rd32(p + 20) != 0 || rd64(p + 24) != rd64(p + 32))
        return bad(what, "multi-disk archives are not supported", rec);
    e->n_entries = rd64(p + 32);
    e->cd_size = rd64(p + 40);
    e->cd_offset = rd64(p + 48);
    return NULL;
}

static onyx_status *read_eocd(const uint8_t *buf, size_t len, const char *what, eocd_info *e) {
    ONYX_TRY(find_eocd(buf, len, what, &e->eocd_at));
    const uint8_t *p = buf + e->eocd_at;
    uint16_t disk = rd16(p + 4), cd_disk = rd16(p + 6), n_here = rd16(p + 8),
             n_total = rd16(p + 10);
    e->n_entries = n_total;
    e->cd_size = rd32(p + 12);
    e->cd_offset = rd32(p + 16);
    if (n_total == 0xffff || e->cd_size == 0xffffffffu || e->cd_offset == 0xffffffffu)
        ONYX_TRY(read_eocd64(buf, len, what, e));
    else if (disk != 0 || cd_disk != 0 || n_here != n_total)
        return bad(what, "multi-disk archives are not supported", e->eocd_at);
    if (!in_range(e->cd_offset, e->cd_size, len))
        return bad(what, "central directory lies outside the file", e->cd_offset);
    if (e->n_entries > e->cd_size / CENTRAL_HEADER_SIZE)
        return bad(what, "entry count does not fit the central directory", e->eocd_at);
    return NULL;
}

/* Replace 0xffffffff sizes/offset with their zip64 extra-field values. */
static onyx_status *apply_zip64_extra(const uint8_t *x, size_t xlen, const char *what, uint64_t at,
                                      uint64_t *usize, uint64_t *csize, uint64_t *offset) {
    uint64_t *fields[3] = {usize, csize, offset};
    while (xlen >= 4) {
        uint16_t id = rd16(x), sz = rd16(x + 2);
        if (sz > xlen - 4) return bad(what, "extra field overruns its header", at);
        if (id == ZIP64_EXTRA_ID) {
            size_t pos = 4;
            for (int i = 0; i < 3; i++) {
                if (*fields[i] != 0xffffffffu) continue;
                if (pos + 8 > 4u + sz) return bad(what, "zip64 extra field too short", at);
                *fields[i] = rd64(x + pos);
                pos += 8;
            }
            return NULL;
        }
        x += 4u + sz;
        xlen -= 4u + sz;
    }
    if (*usize == 0xffffffffu || *csize == 0xffffffffu || *offset == 0xffffffffu)
        return bad(what, "zip64 sizes without a zip64 extra field", at);
    return NULL;
}

/* Parse the central header at *pos into e and advance *pos. */
static onyx_status *read_entry(const uint8_t *buf, size_t len, const char *what, uint64_t cd_end,
                               uint64_t *pos, zip_entry *e) {
    uint64_t at = *pos;
    if (at > cd_end || cd_end - at < CENTRAL_HEADER_SIZE || rd32(buf + at) != SIG_CENTRAL)
        return bad(what, "bad central directory entry", at);
    const uint8_t *p = buf + at;
    uint16_t flags = rd16(p + 8), nlen = rd16(p + 28), xlen = rd16(p + 30), clen = rd16(p + 32);
    uint64_t entry_size = (uint64_t)CENTRAL_HEADER_SIZE + nlen + xlen + clen;
    if (cd_end - at < entry_size) return bad(what, "central directory entry overruns", at);
    e->method = rd16(p + 10);
    e->crc = rd32(p + 16);
    e->csize = rd32(p + 20);
    e->usize = rd32(p + 24);
    uint64_t local = rd32(p + 42);
    const uint8_t *name = p + CENTRAL_HEADER_SIZE;
    if (memchr(name, 0, nlen)) return bad(what, "member name contains a NUL byte", at);
    ONYX_TRY(apply_zip64_extra(name + nlen, xlen, what, at, &e->usize, &e->csize, &local));
    if (flags & 0x41) return bad(what, "encrypted members are not supported", at);
    e->name = strndup((const char *)name, nlen);
    if (!e->name) return ONYX_OOM();
    *pos = at + entry_size;
    /* the data follows the local header, whose name/extra lengths may
     * differ from the central ones */
    if (!in_range(local, LOCAL_HEADER_SIZE, len) || rd32(buf + local) != SIG_LOCAL)
        return bad(what, "bad local header", local);
    uint64_t data = local + LOCAL_HEADER_SIZE + rd16(buf + local + 26) + rd16(buf + local + 28);
    if (!in_range(data, e->csize, len))
        return bad(what, "member data lies outside the file", local);
    e->data = buf + data;
    return NULL;
}

onyx_status *zip_open(const uint8_t *buf, size_t len, const char *what, zip_archive *out) {
    memset(out, 0, sizeof *out);
    eocd_info eo = {0};
    ONYX_TRY(read_eocd(buf, len, what, &eo));
    out->entries = calloc(eo.n_entries ? eo.n_entries : 1, sizeof *out->entries);
    if (!out->entries) return ONYX_OOM();
    uint64_t pos = eo.cd_offset, cd_end = eo.cd_offset + eo.cd_size;
    for (uint64_t i = 0; i < eo.n_entries; i++) {
        out->n++; /* counted first so zip_close frees a name read before a failure */
        onyx_status *st = read_entry(buf, len, what, cd_end, &pos, &out->entries[i]);
        if (st) {
            zip_close(out);
            return st;
        }
    }
    return NULL;
}

void zip_close(zip_archive *z) {
    for (size_t i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    memset(z, 0, sizeof *z);
}

static onyx_status *check_crc(const zip_entry *e, const char *what, const uint8_t *data, size_t n) {
    uint32_t crc = cli_crc32(0, data, n);
    if (crc != e->crc)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "%s: member '%s' is corrupt (CRC-32 %08x, the archive says %08x)", what,
                          e->name, crc, e->crc);
    return NULL;
}

static onyx_status *extract_deflated(const zip_entry *e, const char *what, uint8_t **owned) {
    if (e->usize > SIZE_MAX - 1 || e->usize / MAX_DEFLATE_RATIO > e->csize + 1)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "%s: member '%s' declares %llu bytes from %llu compressed: not plausible",
                          what, e->name, (unsigned long long)e->usize,
                          (unsigned long long)e->csize);
    uint8_t *b = malloc(e->usize ? (size_t)e->usize : 1);
    if (!b) return ONYX_OOM();
    onyx_status *st = cli_inflate(e->data, (size_t)e->csize, b, (size_t)e->usize);
    if (st) {
        free(b);
        return onyx_error_wrap(st, "%s: member '%s': ", what, e->name);
    }
    *owned = b;
    return NULL;
}

onyx_status *zip_extract(const zip_entry *e, const char *what, const uint8_t **out, size_t *out_len,
                         uint8_t **owned) {
    *owned = NULL;
    if (e->method == 0) {
        if (e->csize != e->usize)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                              "%s: stored member '%s' has different compressed and plain sizes",
                              what, e->name);
        *out = e->data;
    } else if (e->method == 8) {
        ONYX_TRY(extract_deflated(e, what, owned));
        *out = *owned;
    } else {
        return onyx_error(ONYX_ERR_NOT_IMPLEMENTED,
                          "%s: member '%s' uses zip compression method %u; only stored (0) and "
                          "deflated (8) are supported",
                          what, e->name, e->method);
    }
    *out_len = (size_t)e->usize;
    onyx_status *st = check_crc(e, what, *out, *out_len);
    if (st) {
        free(*owned);
        *owned = NULL;
    }
    return st;
}

/* ---------------------------------------------------------------- writer */

static void wr16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void wr32(uint8_t *p, uint32_t v) {
    wr16(p, (uint16_t)v);
    wr16(p + 2, (uint16_t)(v >> 16));
}

/* 1980-01-01 00:00: a fixed timestamp keeps the output reproducible. */
#define DOS_TIME 0
#define DOS_DATE 0x21

static onyx_status *write_bytes(zip_writer *w, const void *p, size_t n) {
    if (n && fwrite(p, 1, n, w->f) != n)
        return onyx_error(ONYX_ERR_FAIL, "cannot write '%s': %s", w->path, strerror(errno));
    w->pos += n;
    return NULL;
}

static uint16_t name_flags(const char *name) {
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p >= 0x80) return 0x0800; /* name is UTF-8 */
    return 0;
}

onyx_status *zip_writer_open(zip_writer *w, const char *path) {
    memset(w, 0, sizeof *w);
    w->path = strdup(path);
    if (!w->path) return ONYX_OOM();
    w->f = fopen(path, "wb");
    if (!w->f) {
        onyx_status *st =
            onyx_error(ONYX_ERR_FAIL, "cannot create '%s': %s", path, strerror(errno));
        free(w->path);
        w->path = NULL;
        return st;
    }
    return NULL;
}

static onyx_status *too_big(const zip_writer *w) {
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED,
                      "'%s': archive would exceed 4 GiB or 65535 members (zip64 writing is not "
                      "supported)",
                      w->path);
}

onyx_status *zip_writer_add(zip_writer *w, const char *name, const void *const *parts,
                            const size_t *lens, size_t n_parts) {
    size_t nlen = strlen(name);
    uint64_t size = 0;
    uint32_t crc = 0;
    for (size_t i = 0; i < n_parts; i++) {
        size += lens[i];
        crc = cli_crc32(crc, parts[i], lens[i]);
    }
    if (nlen > 0xffff || size >= 0xffffffffu ||
        w->pos + size + LOCAL_HEADER_SIZE + nlen >= 0xffffffffu || w->n >= 0xfffe)
        return too_big(w);
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        zip_writer_entry *e = realloc(w->entries, cap * sizeof *e);
        if (!e) return ONYX_OOM();
        w->entries = e;
        w->cap = cap;
    }
    zip_writer_entry *e = &w->entries[w->n];
    e->name = strdup(name);
    if (!e->name) return ONYX_OOM();
    e->crc = crc;
    e->size = size;
    e->offset = w->pos;
    w->n++;
    uint8_t h[LOCAL_HEADER_SIZE] = {0};
    wr32(h, SIG_LOCAL);
    wr16(h + 4, 20);
    wr16(h + 6, name_flags(name));
    wr16(h + 10, DOS_TIME);
    wr16(h + 12, DOS_DATE);
    wr32(h + 14, crc);
    wr32(h + 18, (uint32_t)size);
    wr32(h + 22, (uint32_t)size);
    wr16(h + 26, (uint16_t)nlen);
    ONYX_TRY(write_bytes(w, h, sizeof h));
    ONYX_TRY(write_bytes(w, name, nlen));
    for (size_t i = 0; i < n_parts; i++) ONYX_TRY(write_bytes(w, parts[i], lens[i]));
    return NULL;
}

static onyx_status *write_central(zip_writer *w) {
    uint64_t cd_start = w->pos;
    for (size_t i = 0; i < w->n; i++) {
        const zip_writer_entry *e = &w->entries[i];
        size_t nlen = strlen(e->name);
        uint8_t h[CENTRAL_HEADER_SIZE] = {0};
        wr32(h, SIG_CENTRAL);
        wr16(h + 4, 20);
        wr16(h + 6, 20);
        wr16(h + 8, name_flags(e->name));
        wr16(h + 12, DOS_TIME);
        wr16(h + 14, DOS_DATE);
        wr32(h + 16, e->crc);
        wr32(h + 20, (uint32_t)e->size);
        wr32(h + 24, (uint32_t)e->size);
        wr16(h + 28, (uint16_t)nlen);
        wr32(h + 42, (uint32_t)e->offset);
        ONYX_TRY(write_bytes(w, h, sizeof h));
        ONYX_TRY(write_bytes(w, e->name, nlen));
    }
    uint64_t cd_size = w->pos - cd_start;
    if (w->pos >= 0xffffffffu) return too_big(w);
    uint8_t end[EOCD_SIZE] = {0};
    wr32(end, SIG_EOCD);
    wr16(end + 8, (uint16_t)w->n);
    wr16(end + 10, (uint16_t)w->n);
    wr32(end + 12, (uint32_t)cd_size);
    wr32(end + 16, (uint32_t)cd_start);
    return write_bytes(w, end, sizeof end);
}

static void writer_release(zip_writer *w) {
    for (size_t i = 0; i < w->n; i++) free(w->entries[i].name);
    free(w->entries);
    free(w->path);
    memset(w, 0, sizeof *w);
}

onyx_status *zip_writer_finish(zip_writer *w) {
    onyx_status *st = write_central(w);
    if (fclose(w->f) != 0 && !st)
        st = onyx_error(ONYX_ERR_FAIL, "cannot write '%s': %s", w->path, strerror(errno));
    w->f = NULL;
    if (st) remove(w->path);
    writer_release(w);
    return st;
}

void zip_writer_abort(zip_writer *w) {
    if (w->f) {
        fclose(w->f);
        remove(w->path);
    }
    writer_release(w);
}
