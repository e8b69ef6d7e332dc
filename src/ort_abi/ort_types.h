/* ort_types.h - onyx's own declarations of the types in ONNX Runtime's C ABI
 * (OrtApi version 30), written from the published header's semantics: enum
 * values, the structs clients touch directly (OrtAllocator, OrtCustomOp,
 * OrtApiBase) and opaque handle names. Only what the ABI layer needs; the
 * layout of every struct here must match ONNX Runtime's byte for byte. */
#ifndef ONYX_ORT_TYPES_H
#define ONYX_ORT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ORT_ABI_API_VERSION 30
#define ORT_ABI_VERSION_STRING "1.30.0"

typedef enum OrtErrorCode {
    ORT_OK = 0, ORT_FAIL = 1, ORT_INVALID_ARGUMENT = 2, ORT_NO_SUCHFILE = 3, ORT_NO_MODEL = 4,
    ORT_ENGINE_ERROR = 5, ORT_RUNTIME_EXCEPTION = 6, ORT_INVALID_PROTOBUF = 7,
    ORT_MODEL_LOADED = 8, ORT_NOT_IMPLEMENTED = 9, ORT_INVALID_GRAPH = 10, ORT_EP_FAIL = 11,
    ORT_MODEL_LOAD_CANCELED = 12, ORT_MODEL_REQUIRES_COMPILATION = 13, ORT_NOT_FOUND = 14,
} OrtErrorCode;

/* ORT's element numbering follows ONNX up to 23 and then differs: ORT has
 * UINT2 = 24, INT2 = 25, FLOAT8E8M0 = 26 (ONNX: E8M0 = 24, UINT2 = 25,
 * INT2 = 26). ort_elem.c converts. */
typedef enum ONNXTensorElementDataType {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8, ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14, ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN = 17,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ = 18, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 = 19,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ = 20, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 = 21,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 = 22, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 = 23,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 = 24, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 = 25,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0 = 26,
} ONNXTensorElementDataType;

typedef enum ONNXType {
    ONNX_TYPE_UNKNOWN = 0, ONNX_TYPE_TENSOR = 1, ONNX_TYPE_SEQUENCE = 2, ONNX_TYPE_MAP = 3,
    ONNX_TYPE_OPAQUE = 4, ONNX_TYPE_SPARSETENSOR = 5, ONNX_TYPE_OPTIONAL = 6,
} ONNXType;

typedef enum OrtSparseFormat { ORT_SPARSE_UNDEFINED = 0 } OrtSparseFormat;
enum OrtSparseIndicesFormat { ORT_SPARSE_COO_INDICES = 0 };

typedef enum OrtLoggingLevel {
    ORT_LOGGING_LEVEL_VERBOSE = 0, ORT_LOGGING_LEVEL_INFO = 1, ORT_LOGGING_LEVEL_WARNING = 2,
    ORT_LOGGING_LEVEL_ERROR = 3, ORT_LOGGING_LEVEL_FATAL = 4,
} OrtLoggingLevel;

typedef enum OrtOpAttrType {
    ORT_OP_ATTR_UNDEFINED = 0, ORT_OP_ATTR_INT, ORT_OP_ATTR_INTS, ORT_OP_ATTR_FLOAT,
    ORT_OP_ATTR_FLOATS, ORT_OP_ATTR_STRING, ORT_OP_ATTR_STRINGS, ORT_OP_ATTR_GRAPH,
    ORT_OP_ATTR_TENSOR,
} OrtOpAttrType;

typedef enum GraphOptimizationLevel {
    ORT_DISABLE_ALL = 0, ORT_ENABLE_BASIC = 1, ORT_ENABLE_EXTENDED = 2, ORT_ENABLE_LAYOUT = 3,
    ORT_ENABLE_ALL = 99,
} GraphOptimizationLevel;

typedef enum ExecutionMode { ORT_SEQUENTIAL = 0, ORT_PARALLEL = 1 } ExecutionMode;

typedef enum OrtLanguageProjection {
    ORT_PROJECTION_C = 0, ORT_PROJECTION_CPLUSPLUS = 1, ORT_PROJECTION_CSHARP = 2,
    ORT_PROJECTION_PYTHON = 3, ORT_PROJECTION_JAVA = 4, ORT_PROJECTION_WINML = 5,
    ORT_PROJECTION_NODEJS = 6,
} OrtLanguageProjection;

typedef enum OrtAllocatorType {
    OrtInvalidAllocator = -1, OrtDeviceAllocator = 0, OrtArenaAllocator = 1,
    OrtReadOnlyAllocator = 2,
} OrtAllocatorType;

typedef enum OrtMemType {
    OrtMemTypeCPUInput = -2, OrtMemTypeCPUOutput = -1, OrtMemTypeCPU = -1, OrtMemTypeDefault = 0,
} OrtMemType;

typedef enum OrtDeviceMemoryType {
    OrtDeviceMemoryType_DEFAULT = 0, OrtDeviceMemoryType_HOST_ACCESSIBLE = 5,
} OrtDeviceMemoryType;

typedef enum OrtMemoryInfoDeviceType {
    OrtMemoryInfoDeviceType_CPU = 0, OrtMemoryInfoDeviceType_GPU = 1,
    OrtMemoryInfoDeviceType_FPGA = 2, OrtMemoryInfoDeviceType_NPU = 3,
} OrtMemoryInfoDeviceType;

typedef enum OrtHardwareDeviceType {
    OrtHardwareDeviceType_CPU = 0, OrtHardwareDeviceType_GPU, OrtHardwareDeviceType_NPU,
} OrtHardwareDeviceType;

typedef enum OrtExecutionProviderDevicePolicy { OrtExecutionProviderDevicePolicy_DEFAULT = 0 }
    OrtExecutionProviderDevicePolicy;
typedef enum OrtCompiledModelCompatibility { OrtCompiledModelCompatibility_EP_NOT_APPLICABLE = 0 }
    OrtCompiledModelCompatibility;

typedef enum OrtCustomOpInputOutputCharacteristic {
    INPUT_OUTPUT_REQUIRED = 0, INPUT_OUTPUT_OPTIONAL, INPUT_OUTPUT_VARIADIC,
} OrtCustomOpInputOutputCharacteristic;

/* Opaque handles. Those onyx implements are defined in ort_abi.h. */
#define ORT_ABI_HANDLE(X) typedef struct Ort##X Ort##X
ORT_ABI_HANDLE(Env); ORT_ABI_HANDLE(Status); ORT_ABI_HANDLE(MemoryInfo); ORT_ABI_HANDLE(IoBinding);
ORT_ABI_HANDLE(Session); ORT_ABI_HANDLE(Value); ORT_ABI_HANDLE(RunOptions);
ORT_ABI_HANDLE(TypeInfo); ORT_ABI_HANDLE(TensorTypeAndShapeInfo); ORT_ABI_HANDLE(MapTypeInfo);
ORT_ABI_HANDLE(SequenceTypeInfo); ORT_ABI_HANDLE(OptionalTypeInfo);
ORT_ABI_HANDLE(SessionOptions); ORT_ABI_HANDLE(CustomOpDomain); ORT_ABI_HANDLE(ModelMetadata);
ORT_ABI_HANDLE(ThreadingOptions); ORT_ABI_HANDLE(ArenaCfg);
ORT_ABI_HANDLE(PrepackedWeightsContainer); ORT_ABI_HANDLE(TensorRTProviderOptionsV2);
ORT_ABI_HANDLE(CUDAProviderOptionsV2); ORT_ABI_HANDLE(CANNProviderOptions);
ORT_ABI_HANDLE(DnnlProviderOptions); ORT_ABI_HANDLE(Op); ORT_ABI_HANDLE(OpAttr);
ORT_ABI_HANDLE(Logger); ORT_ABI_HANDLE(ShapeInferContext); ORT_ABI_HANDLE(LoraAdapter);
ORT_ABI_HANDLE(ValueInfo); ORT_ABI_HANDLE(Node); ORT_ABI_HANDLE(Graph); ORT_ABI_HANDLE(Model);
ORT_ABI_HANDLE(ModelCompilationOptions); ORT_ABI_HANDLE(HardwareDevice);
ORT_ABI_HANDLE(EpDevice); ORT_ABI_HANDLE(KeyValuePairs); ORT_ABI_HANDLE(SyncStream);
ORT_ABI_HANDLE(ExternalInitializerInfo); ORT_ABI_HANDLE(DeviceEpIncompatibilityDetails);
ORT_ABI_HANDLE(EpAssignedSubgraph); ORT_ABI_HANDLE(EpAssignedNode);
ORT_ABI_HANDLE(KernelInfo); ORT_ABI_HANDLE(KernelContext);
ORT_ABI_HANDLE(CUDAProviderOptions); ORT_ABI_HANDLE(ROCMProviderOptions);
ORT_ABI_HANDLE(OpenVINOProviderOptions); ORT_ABI_HANDLE(TensorRTProviderOptions);
ORT_ABI_HANDLE(MIGraphXProviderOptions); ORT_ABI_HANDLE(ThreadPoolCallbacksConfig);
ORT_ABI_HANDLE(EnvCreationOptions);
ORT_ABI_HANDLE(TrainingApi); ORT_ABI_HANDLE(ModelEditorApi); ORT_ABI_HANDLE(InteropApi);
ORT_ABI_HANDLE(EpApi);
#undef ORT_ABI_HANDLE

typedef struct OrtApi OrtApi;
typedef struct OrtCompileApi OrtCompileApi;

/* Clients call these members directly; `version` says which trailing
 * members exist (Reserve >= 18, GetStats/AllocOnStream >= 23, Shrink 30). */
typedef struct OrtAllocator {
    uint32_t version;
    void *(*Alloc)(struct OrtAllocator *self, size_t size);
    void (*Free)(struct OrtAllocator *self, void *p);
    const OrtMemoryInfo *(*Info)(const struct OrtAllocator *self);
    void *(*Reserve)(struct OrtAllocator *self, size_t size);
    OrtStatus *(*GetStats)(const struct OrtAllocator *self, OrtKeyValuePairs **out);
    void *(*AllocOnStream)(struct OrtAllocator *self, size_t size, OrtSyncStream *stream);
    OrtStatus *(*Shrink)(struct OrtAllocator *self);
} OrtAllocator;

typedef void (*OrtLoggingFunction)(void *param, OrtLoggingLevel severity, const char *category,
                                   const char *logid, const char *code_location,
                                   const char *message);

typedef void (*OrtThreadWorkerFn)(void *param);
typedef const struct OrtCustomHandleType { char placeholder; } *OrtCustomThreadHandle;
typedef OrtCustomThreadHandle (*OrtCustomCreateThreadFn)(void *options, OrtThreadWorkerFn fn,
                                                         void *param);
typedef void (*OrtCustomJoinThreadFn)(OrtCustomThreadHandle handle);
typedef void (*RunAsyncCallbackFn)(void *user_data, OrtValue **outputs, size_t n,
                                   OrtStatus *status);
typedef OrtStatus *(*EpSelectionDelegate)(const OrtEpDevice **devices, size_t n,
                                          const OrtKeyValuePairs *model_meta,
                                          const OrtKeyValuePairs *runtime_meta,
                                          const OrtEpDevice **selected, size_t max_selected,
                                          size_t *n_selected, void *state);
typedef void (*OrtExperimentalFnPtr)(void);

typedef struct OrtApiBase {
    const OrtApi *(*GetApi)(uint32_t version);
    const char *(*GetVersionString)(void);
} OrtApiBase;

typedef OrtStatus *(*RegisterCustomOpsFn)(OrtSessionOptions *options, const OrtApiBase *api);

/* A custom operator as a library describes it. `version` (the ORT API
 * version the library was built with) says which members exist: the
 * characteristic getters from 8, GetInputMemoryType 9, variadic 14,
 * CreateKernelV2/KernelComputeV2 16, InferOutputShapeFn/Start/EndVersion
 * 17, MayInplace 18, AliasMap 20. */
typedef struct OrtCustomOp {
    uint32_t version;
    void *(*CreateKernel)(const struct OrtCustomOp *op, const OrtApi *api, const OrtKernelInfo *info);
    const char *(*GetName)(const struct OrtCustomOp *op);
    const char *(*GetExecutionProviderType)(const struct OrtCustomOp *op);
    ONNXTensorElementDataType (*GetInputType)(const struct OrtCustomOp *op, size_t index);
    size_t (*GetInputTypeCount)(const struct OrtCustomOp *op);
    ONNXTensorElementDataType (*GetOutputType)(const struct OrtCustomOp *op, size_t index);
    size_t (*GetOutputTypeCount)(const struct OrtCustomOp *op);
    void (*KernelCompute)(void *kernel, OrtKernelContext *ctx);
    void (*KernelDestroy)(void *kernel);
    OrtCustomOpInputOutputCharacteristic (*GetInputCharacteristic)(const struct OrtCustomOp *op,
                                                                    size_t index);
    OrtCustomOpInputOutputCharacteristic (*GetOutputCharacteristic)(const struct OrtCustomOp *op,
                                                                     size_t index);
    OrtMemType (*GetInputMemoryType)(const struct OrtCustomOp *op, size_t index);
    int (*GetVariadicInputMinArity)(const struct OrtCustomOp *op);
    int (*GetVariadicInputHomogeneity)(const struct OrtCustomOp *op);
    int (*GetVariadicOutputMinArity)(const struct OrtCustomOp *op);
    int (*GetVariadicOutputHomogeneity)(const struct OrtCustomOp *op);
    OrtStatus *(*CreateKernelV2)(const struct OrtCustomOp *op, const OrtApi *api,
                                 const OrtKernelInfo *info, void **kernel);
    OrtStatus *(*KernelComputeV2)(void *kernel, OrtKernelContext *ctx);
    OrtStatus *(*InferOutputShapeFn)(const struct OrtCustomOp *op, OrtShapeInferContext *ctx);
    int (*GetStartVersion)(const struct OrtCustomOp *op);
    int (*GetEndVersion)(const struct OrtCustomOp *op);
    size_t (*GetMayInplace)(int **input_index, int **output_index);
    void (*ReleaseMayInplace)(int *input_index, int *output_index);
    size_t (*GetAliasMap)(int **input_index, int **output_index);
    void (*ReleaseAliasMap)(int *input_index, int *output_index);
} OrtCustomOp;

#endif
