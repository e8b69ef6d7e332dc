// env: onnxruntime-web's global settings. The WebAssembly build is
// single-threaded with SIMD compiled in, so numThreads and simd are read
// only to warn about what cannot be had; wasmPaths (a prefix or a map of
// file names to URLs) says where dist/onyx-wasm.{cjs,wasm} are served.
export const env = {
  wasm: {
    numThreads: 1,
    simd: true,
    proxy: false,
    wasmPaths: undefined,
    initTimeout: 0,
  },
  logLevel: 'warning',
  debug: false,
  versions: { onyx: '0.1.0' },
};
