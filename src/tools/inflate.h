/* Raw DEFLATE (RFC 1951) decoding and CRC-32 for deflated .npz members,
 * implemented with zlib. */
#ifndef ONYX_TOOLS_INFLATE_H
#define ONYX_TOOLS_INFLATE_H

#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

/* CRC-32 (ISO-HDLC, as zip uses) of data, continuing from crc (0 to start). */
uint32_t cli_crc32(uint32_t crc, const void *data, size_t len);

/* Decode a raw deflate stream into exactly out_len bytes. Every length and
 * distance is checked: the stream must end (final block) having produced
 * exactly out_len bytes without reading past in_len. */
onyx_status *cli_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);
/* Decode only the start of a raw deflate stream: up to cap bytes into out
 * (fewer when the stream ends first); *produced says how many. Lets a
 * reader check a member's header before it trusts its declared size. */
onyx_status *cli_inflate_prefix(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap, size_t *produced);

#endif
