/* Element types: ONNX Runtime numbers its tensor element types like ONNX up
 * to FLOAT4E2M1 (23) and then differently (ORT: UINT2 24, INT2 25,
 * FLOAT8E8M0 26; ONNX: FLOAT8E8M0 24, UINT2 25, INT2 26). */
#include "ort_abi/ort_abi.h"

int ort_elem_to_onyx(ONNXTensorElementDataType t) {
    switch ((int)t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2: return ONYX_UINT2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2: return ONYX_INT2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0: return ONYX_FLOAT8E8M0;
    default: return (int)t >= 1 && (int)t <= 23 ? (int)t : -1;
    }
}

ONNXTensorElementDataType ort_elem_from_onyx(int t) {
    switch (t) {
    case ONYX_UINT2: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2;
    case ONYX_INT2: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2;
    case ONYX_FLOAT8E8M0: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0;
    default: return t >= 1 && t <= 23 ? (ONNXTensorElementDataType)t
                                      : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    }
}
