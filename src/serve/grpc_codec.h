/* KServe v2 gRPC messages (grpc_service.proto of the Open Inference
 * Protocol) <-> sv_request, with onyx's protobuf wire code. */
#ifndef ONYX_SERVE_GRPC_CODEC_H
#define ONYX_SERVE_GRPC_CODEC_H

#include "format/pb_wire.h"
#include "serve/serve.h"

/* ModelInferRequest -> r (inputs, outputs, id); model name and version
 * into name/version (caller frees). false: r->status 400 with the field. */
bool sv_grpc_decode_infer(sv_request *r, const uint8_t *msg, size_t len, char **name, char **version);
/* ModelInferResponse of a successful request (raw_output_contents). */
void sv_grpc_encode_infer(const sv_request *r, pb_buf *out);
/* Requests of the metadata calls: name = 1, version = 2. */
bool sv_grpc_decode_name_version(const uint8_t *msg, size_t len, char **name, char **version, char *err,
                                 size_t err_len);
void sv_grpc_encode_model_metadata(sv_server *s, const sv_model *m, pb_buf *out);
void sv_grpc_encode_server_metadata(pb_buf *out);
/* Triton's ModelStatistics call: ModelStatisticsRequest {name 1, version 2}
 * (no name: every model) -> ModelStatisticsResponse {model_stats 1}. Returns
 * 200, or 400 (malformed) / 404 (unknown model) with err. */
int sv_grpc_model_statistics(sv_server *s, const uint8_t *msg, size_t len, pb_buf *out, char *err, size_t err_len);
/* Triton's repository extension: RepositoryIndexRequest {repository_name 1,
 * ready 2}, RepositoryModelLoad/UnloadRequest {repository_name 1,
 * model_name 2, parameters 3}; RepositoryIndexResponse {models 1:
 * ModelIndex {name 1, version 2, state 3, reason 4}}. */
bool sv_grpc_decode_repository(const uint8_t *msg, size_t len, char **model_name, bool *ready, char *err,
                               size_t err_len);
void sv_grpc_encode_repository_index(sv_server *s, bool ready_only, pb_buf *out);

#endif
