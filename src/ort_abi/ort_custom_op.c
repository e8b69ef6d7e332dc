/* Custom operators registered from outside (OrtCustomOpDomain). */
#include "ort_abi/ort_abi.h"

OrtStatus *ort_custom_ops_attach(const OrtSessionOptions *o, onyx_session_options *oo) {
    if (o->n_domains)
        return ort_status(ORT_NOT_IMPLEMENTED, "custom operator domains are not supported yet");
    return NULL;
}
