/* The slots onyx does not implement (flag N in slots.h): each returns
 * ORT_NOT_IMPLEMENTED naming the function, or for slots without a status a
 * harmless value (nothing for void, 0 / NULL / false otherwise). */
#include "ort_abi/ort_abi.h"

#define ORT_STUB_I(kind, ret, name, params)
#define ORT_STUB_N(kind, ret, name, params) ORT_STUB_##kind(ret, name, params)
#define ORT_STUB_S(ret, name, params) \
    ret ort_##name params { return ort_status(ORT_NOT_IMPLEMENTED, #name " is not implemented in onyx's ONNX Runtime ABI"); }
#define ORT_STUB_V(ret, name, params) ret ort_##name params {}
#define ORT_STUB_R(ret, name, params) ret ort_##name params { return (ret)0; }
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) ORT_STUB_##impl(kind, ret, name, params)
#include "ort_abi/slots.h"
#undef ORT_SLOT
