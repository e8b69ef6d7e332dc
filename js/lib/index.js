// onyx-wasm: onnxruntime-web's API (InferenceSession, Tensor, env) over
// onyx compiled to WebAssembly. Code written for onnxruntime-web runs with
// only its import changed.
export { InferenceSession } from './session.js';
export { Tensor } from './tensor.js';
export { env } from './env.js';
