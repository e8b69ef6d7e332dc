/* --mode static: calibrated activation ranges, QDQ or integer operators. */
#include "quantize/quantize.h"

onyx_status *onyx_quantize_static(onyx_quant_job *job) {
    (void)job;
    return ONYX_NOT_IMPLEMENTED("--mode static is not implemented yet (calibration and QDQ insertion)");
}
