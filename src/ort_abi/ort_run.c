/* Run options over onyx_run_options: terminate (from any thread), run tag,
 * log levels and config entries. */
#include <stdlib.h>
#include "ort_abi/ort_abi.h"

OrtStatus *ort_CreateRunOptions(OrtRunOptions **out) {
    ORT_ARG_CHECK(out, "CreateRunOptions", "out is NULL");
    OrtRunOptions *r = calloc(1, sizeof *r);
    if (!r) return ort_status(ORT_FAIL, "CreateRunOptions: out of memory");
    OrtStatus *st = ort_from_onyx(onyx_run_options_create(&r->ro));
    if (st) { free(r); return st; }
    *out = r;
    return NULL;
}
void ort_ReleaseRunOptions(OrtRunOptions *r) {
    if (!r) return;
    onyx_run_options_free(r->ro);
    free(r);
}
#define RO_CHECK(fn) ORT_ARG_CHECK(ro, fn, "run options are NULL")
OrtStatus *ort_RunOptionsSetRunLogVerbosityLevel(OrtRunOptions *ro, int level) {
    RO_CHECK("RunOptionsSetRunLogVerbosityLevel");
    ro->verbosity = level;
    return NULL;
}
OrtStatus *ort_RunOptionsGetRunLogVerbosityLevel(const OrtRunOptions *ro, int *out) {
    RO_CHECK("RunOptionsGetRunLogVerbosityLevel");
    ORT_ARG_CHECK(out, "RunOptionsGetRunLogVerbosityLevel", "out is NULL");
    *out = ro->verbosity;
    return NULL;
}
OrtStatus *ort_RunOptionsSetRunLogSeverityLevel(OrtRunOptions *ro, int level) {
    RO_CHECK("RunOptionsSetRunLogSeverityLevel");
    if (level < 0 || level > 4)
        return ort_status(ORT_INVALID_ARGUMENT, "RunOptionsSetRunLogSeverityLevel: level %d is "
                          "not in [0, 4]", level);
    onyx_run_options_set_log_level(ro->ro, (onyx_log_level)level);
    return NULL;
}
OrtStatus *ort_RunOptionsGetRunLogSeverityLevel(const OrtRunOptions *ro, int *out) {
    RO_CHECK("RunOptionsGetRunLogSeverityLevel");
    ORT_ARG_CHECK(out, "RunOptionsGetRunLogSeverityLevel", "out is NULL");
    *out = (int)onyx_run_options_get_log_level(ro->ro);
    return NULL;
}
OrtStatus *ort_RunOptionsSetRunTag(OrtRunOptions *ro, const char *tag) {
    RO_CHECK("RunOptionsSetRunTag");
    ORT_ARG_CHECK(tag, "RunOptionsSetRunTag", "tag is NULL");
    return ort_from_onyx(onyx_run_options_set_tag(ro->ro, tag));
}
OrtStatus *ort_RunOptionsGetRunTag(const OrtRunOptions *ro, const char **out) {
    RO_CHECK("RunOptionsGetRunTag");
    ORT_ARG_CHECK(out, "RunOptionsGetRunTag", "out is NULL");
    const char *t = onyx_run_options_get_tag(ro->ro);
    *out = t ? t : "";
    return NULL;
}
OrtStatus *ort_RunOptionsSetTerminate(OrtRunOptions *ro) {
    RO_CHECK("RunOptionsSetTerminate");
    onyx_run_options_set_terminate(ro->ro, 1);
    return NULL;
}
OrtStatus *ort_RunOptionsUnsetTerminate(OrtRunOptions *ro) {
    RO_CHECK("RunOptionsUnsetTerminate");
    onyx_run_options_set_terminate(ro->ro, 0);
    return NULL;
}
OrtStatus *ort_AddRunConfigEntry(OrtRunOptions *ro, const char *key, const char *value) {
    RO_CHECK("AddRunConfigEntry");
    ORT_ARG_CHECK(key && value, "AddRunConfigEntry", "key or value is NULL");
    return ort_from_onyx(onyx_run_options_add_config(ro->ro, key, value));
}
const char *ort_GetRunConfigEntry(const OrtRunOptions *ro, const char *key) {
    return ro && key ? onyx_run_options_get_config(ro->ro, key) : NULL;
}
