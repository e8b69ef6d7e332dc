/* Structured logs on stderr: one JSON object per line (--log-format json)
 * or "TIME LEVEL event key=value ..." text. Fields are string pairs ending
 * with NULL: sv_log(SV_LOG_INFO, "model_loaded", "model", name, NULL). */
#ifndef ONYX_SERVE_LOG_H
#define ONYX_SERVE_LOG_H

#include <stdbool.h>

typedef enum sv_log_level { SV_LOG_DEBUG, SV_LOG_INFO, SV_LOG_WARN, SV_LOG_ERROR } sv_log_level;

void sv_log_setup(bool json, sv_log_level min_level);
void sv_log(sv_log_level level, const char *event, ...) __attribute__((sentinel));

#endif
