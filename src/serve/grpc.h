/* The KServe v2 GRPCInferenceService over HTTP/2 (libnghttp2), messages
 * coded with onyx's protobuf wire reader/writer (src/format/pb_wire.h). */
#ifndef ONYX_SERVE_GRPC_H
#define ONYX_SERVE_GRPC_H

#include "serve/serve.h"

typedef struct sv_grpc sv_grpc;

sv_grpc *sv_grpc_start(sv_server *s, int port, char *err, size_t err_len);
void sv_grpc_quiesce(sv_grpc *g);   /* stop accepting connections */
void sv_grpc_stop(sv_grpc *g);      /* close connections (after the drain) */

#endif
