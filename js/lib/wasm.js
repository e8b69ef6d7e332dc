// Loading the WebAssembly module (dist/onyx-wasm.wasm and its Emscripten
// glue dist/onyx-wasm.cjs, built by `make wasm`) once per process or page,
// and small helpers over its heap.
import { env } from './env.js';

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

let modulePromise = null;

function distUrl(file) {
  const prefix = env.wasm.wasmPaths;
  if (typeof prefix === 'string') return prefix + file;
  if (prefix && typeof prefix === 'object' && prefix[file]) return prefix[file];
  return new URL(`../dist/${file}`, import.meta.url).href;
}

async function loadNode() {
  const { createRequire } = await import('node:module');
  const { readFile } = await import('node:fs/promises');
  const { fileURLToPath } = await import('node:url');
  const toPath = (u) => (u.startsWith('file:') ? fileURLToPath(u) : u);
  const factory = createRequire(import.meta.url)(toPath(distUrl('onyx-wasm.cjs')));
  const wasmBinary = await readFile(toPath(distUrl('onyx-wasm.wasm')));
  return factory({ wasmBinary });
}

function loadScript(url) {
  if (typeof importScripts === 'function') {
    importScripts(url);   // a Web Worker
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = () => resolve();
    s.onerror = () => reject(new Error(`failed to load ${url}`));
    document.head.appendChild(s);
  });
}

async function loadBrowser() {
  if (typeof globalThis.createOnyxModule !== 'function') await loadScript(distUrl('onyx-wasm.cjs'));
  const resp = await fetch(distUrl('onyx-wasm.wasm'));
  if (!resp.ok) throw new Error(`failed to fetch ${distUrl('onyx-wasm.wasm')}: HTTP ${resp.status}`);
  const wasmBinary = new Uint8Array(await resp.arrayBuffer());
  return globalThis.createOnyxModule({ wasmBinary });
}

// The instantiated module (first call loads it). WebAssembly SIMD is part
// of the build: a runtime without it fails here with the engine's message.
export function getModule() {
  if (!modulePromise) {
    if (env.wasm.numThreads !== undefined && env.wasm.numThreads > 1)
      console.warn(`onyx-wasm: env.wasm.numThreads = ${env.wasm.numThreads}: this build is single-threaded; using 1`);
    modulePromise = isNode ? loadNode() : loadBrowser();
    modulePromise.catch(() => { modulePromise = null; });
  }
  return modulePromise;
}

// Throws an Error with onyx's message when status (an onyx_status *) is set,
// and frees the status.
export function check(M, status) {
  if (status === 0) return;
  const msg = M.UTF8ToString(M._onyx_status_message(status));
  M._onyx_status_free(status);
  throw new Error(msg);
}

// A NUL-terminated UTF-8 copy of str in the heap (caller frees).
export function allocString(M, str) {
  const n = M.lengthBytesUTF8(str) + 1;
  const p = M._malloc(n);
  if (!p) throw new Error('onyx-wasm: out of memory');
  M.stringToUTF8(str, p, n);
  return p;
}

// Heap views are re-read after every call that may grow the memory.
export function u32(M) { return M.HEAPU32; }
export function u8(M) { return M.HEAPU8; }
