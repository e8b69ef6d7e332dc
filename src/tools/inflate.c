/* Deflate decoding and CRC-32 for .npz members, through zlib. */
#include "tools/inflate.h"

#include <limits.h>
#include <zlib.h>

uint32_t cli_crc32(uint32_t crc, const void *data, size_t len) {
    const uint8_t *p = data;
    while (len > 0) {
        uInt n = len > UINT_MAX ? UINT_MAX : (uInt)len;
        crc = (uint32_t)crc32(crc, p, n);
        p += n;
        len -= n;
    }
    return crc;
}

onyx_status *cli_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len) {
    if (in_len > UINT_MAX || out_len > UINT_MAX)
        return ONYX_INVALID_ARG("deflated member too large (%zu -> %zu bytes)", in_len, out_len);
    z_stream z = {0};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return ONYX_OOM(); /* raw deflate, as zip stores it */
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)in_len;
    z.next_out = out;
    z.avail_out = (uInt)out_len;
    int rc = inflate(&z, Z_FINISH);
    size_t produced = out_len - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        return ONYX_INVALID_ARG("corrupt deflate data (%s) after %zu of %zu bytes",
                                rc == Z_BUF_ERROR ? "truncated, or more data than the header says"
                                                  : rc == Z_DATA_ERROR ? "invalid stream" : "error",
                                produced, out_len);
    if (produced != out_len)
        return ONYX_INVALID_ARG("deflate data holds %zu bytes, the header says %zu", produced, out_len);
    return NULL;
}

onyx_status *cli_inflate_prefix(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap, size_t *produced) {
    *produced = 0;
    if (cap > UINT_MAX) cap = UINT_MAX;
    z_stream z = {0};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return ONYX_OOM();
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)(in_len > UINT_MAX ? UINT_MAX : in_len);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_SYNC_FLUSH);
    *produced = cap - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && *produced == cap))
        return ONYX_INVALID_ARG("corrupt deflate data (%s) in the first %zu bytes",
                                rc == Z_DATA_ERROR ? "invalid stream" : "truncated", *produced);
    return NULL;
}
