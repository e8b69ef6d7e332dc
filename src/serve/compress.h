/* Compression as Triton allows it, for REST bodies (Content-Encoding,
 * Accept-Encoding) and gRPC messages (grpc-encoding): gzip or deflate (the
 * zlib format, as HTTP's "deflate" means). */
#ifndef ONYX_SERVE_COMPRESS_H
#define ONYX_SERVE_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Inflates at most `limit` bytes into a new *out (caller frees). false:
 * corrupt or truncated input, or (*too_big) more than `limit` bytes. */
bool sv_inflate(const uint8_t *in, size_t len, bool gzip, size_t limit, uint8_t **out, size_t *out_len,
                bool *too_big);
/* Deflates into a new *out (caller frees); false only when out of memory. */
bool sv_deflate(const uint8_t *in, size_t len, bool gzip, uint8_t **out, size_t *out_len);
/* "gzip" or "deflate": true and *gzip says which; anything else false. */
bool sv_encoding_parse(const char *name, bool *gzip);

#endif
