/* KServe v2 REST inference bodies: JSON tensors and Triton's binary tensor
 * extension, decoded into an sv_request and encoded from its results. */
#ifndef ONYX_SERVE_REST_CODEC_H
#define ONYX_SERVE_REST_CODEC_H

#include "serve/json.h"
#include "serve/serve.h"

/* Fills r->id, inputs and requested outputs from the request body.
 * json_len: the Inference-Header-Content-Length (the whole body when the
 * header is absent); bytes after it are the binary tensors in input order.
 * On error sets r->status 400 with a message naming the field. */
bool sv_rest_decode(sv_request *r, const uint8_t *body, size_t len, size_t json_len);
/* Encodes a successful response: JSON, then the binary outputs; *json_len
 * is the JSON part's length (for Inference-Header-Content-Length; equal to
 * out->len when nothing is binary). */
void sv_rest_encode(const sv_request *r, sbuf *out, size_t *json_len);

/* IEEE half and bfloat16 from/to float (round to nearest even). */
uint16_t sv_f32_to_f16(float f);
float sv_f16_to_f32(uint16_t h);
uint16_t sv_f32_to_bf16(float f);
float sv_bf16_to_f32(uint16_t h);

#endif
