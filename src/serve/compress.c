/* gzip and deflate (zlib) bodies and messages for REST's Content-Encoding
 * and gRPC's grpc-encoding (see compress.h). */
#include "serve/compress.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

bool sv_inflate(const uint8_t *in, size_t len, bool gzip, size_t limit, uint8_t **out, size_t *out_len,
                bool *too_big) {
    z_stream z;
    memset(&z, 0, sizeof z);
    *too_big = false;
    if (inflateInit2(&z, gzip ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK) return false;
    size_t cap = len * 4 + 1024, n = 0;
    if (cap > limit + 1) cap = limit + 1;
    uint8_t *buf = malloc(cap);
    int rc = Z_OK;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    while (buf && rc == Z_OK) {
        if (n == cap) {
            if (cap > limit) { *too_big = true; break; }
            size_t nc = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            uint8_t *g = realloc(buf, nc);
            if (!g) break;
            buf = g;
            cap = nc;
        }
        z.next_out = buf + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_out) break;   /* truncated input */
        if (rc == Z_BUF_ERROR) rc = Z_OK;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || n > limit || z.avail_in) {
        if (n > limit) *too_big = true;
        free(buf);
        return false;
    }
    *out = buf;
    *out_len = n;
    return true;
}

bool sv_deflate(const uint8_t *in, size_t len, bool gzip, uint8_t **out, size_t *out_len) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, gzip ? 16 + MAX_WBITS : MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    size_t cap = deflateBound(&z, (uLong)len);
    uint8_t *buf = malloc(cap);
    if (!buf) { deflateEnd(&z); return false; }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) { free(buf); return false; }
    *out = buf;
    return true;
}

bool sv_encoding_parse(const char *name, bool *gzip) {
    if (strcmp(name, "gzip") == 0) { *gzip = true; return true; }
    if (strcmp(name, "deflate") == 0) { *gzip = false; return true; }
    return false;
}
