// InferenceSession: onnxruntime-web's session API over onyx's C API in
// WebAssembly. Every failure, onyx's checks of names, types and shapes
// included, becomes a rejected promise carrying onyx's message.
import { Tensor, typeCode, typeName, arrayType } from './tensor.js';
import { getModule, check, allocString } from './wasm.js';

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

const OPT_LEVELS = { disabled: 0, basic: 1, extended: 2, layout: 99, all: 99 };
const LOG_LEVELS = { verbose: 0, info: 1, warning: 2, error: 3, fatal: 4 };
const PROVIDERS = new Set(['wasm', 'cpu']);

async function modelBytes(source) {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (typeof source !== 'string')
    throw new TypeError('InferenceSession.create: expected a model path or URL, an ArrayBuffer or a Uint8Array');
  if (isNode && !/^(https?|data|blob):/.test(source)) {
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(source.startsWith('file:') ? new URL(source) : source));
  }
  const resp = await fetch(source);
  if (!resp.ok) throw new Error(`failed to fetch model ${source}: HTTP ${resp.status}`);
  return new Uint8Array(await resp.arrayBuffer());
}

function sessionFlags(options = {}) {
  for (const ep of options.executionProviders ?? []) {
    const name = typeof ep === 'string' ? ep : ep?.name;
    if (!PROVIDERS.has(name))
      throw new Error(`execution provider '${name}' is not available in onyx-wasm (it has 'wasm' and 'cpu')`);
  }
  const opt = options.graphOptimizationLevel ?? 'all';
  if (!(opt in OPT_LEVELS))
    throw new Error(`graphOptimizationLevel '${opt}' is not one of disabled, basic, extended, all`);
  let log = options.logSeverityLevel ?? 2;
  if (typeof log === 'string') log = LOG_LEVELS[log] ?? 2;
  if (!(Number.isInteger(log) && log >= 0 && log <= 4)) throw new Error(`logSeverityLevel ${log} is not 0..4`);
  return { opt: OPT_LEVELS[opt], log };
}

// A tensor in the heap: the data copied in, freed by the returned release().
function inputValue(M, name, t, owned) {
  if (!(t instanceof Tensor) && !(t && typeof t === 'object' && 'type' in t && 'data' in t && 'dims' in t))
    throw new TypeError(`input '${name}' must be a Tensor`);
  const rank = t.dims.length;
  const shape = M._malloc(Math.max(rank, 1) * 8);
  owned.push(shape);
  for (let i = 0; i < rank; i++) M.HEAP64[(shape >> 3) + i] = BigInt(t.dims[i]);
  const out = M._malloc(4);
  owned.push(out);
  let st;
  if (t.type === 'string') {
    const ptrs = M._malloc(Math.max(t.data.length, 1) * 4);
    owned.push(ptrs);
    for (let i = 0; i < t.data.length; i++) {
      const s = allocString(M, t.data[i]);
      owned.push(s);
      M.HEAPU32[(ptrs >> 2) + i] = s;
    }
    st = M._onyx_tensor_create_strings(shape, rank, ptrs, out);
  } else {
    const code = typeCode(t.type);
    const src = t.data;
    const bytes = new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
    const data = M._malloc(Math.max(bytes.length, 1));
    if (!data) throw new Error(`onyx-wasm: out of memory for input '${name}' (${bytes.length} bytes)`);
    owned.push(data);
    M.HEAPU8.set(bytes, data);
    st = M._onyx_tensor_create_with_data(code, shape, rank, data, bytes.length, out);
  }
  check(M, st);
  return M.HEAPU32[out >> 2];
}

// Copies an output value out of the heap into a Tensor.
function outputTensor(M, value, name) {
  const info = M._malloc(6 * 4);
  try {
    if (M._onyx_wasm_tensor_info(value, info) !== 0)
      throw new Error(`output '${name}' is not a tensor (sequences, maps and optionals are not supported by onyx-wasm)`);
    const [, code, rank, shapePtr, dataPtr, nbytes] = M.HEAPU32.subarray(info >> 2, (info >> 2) + 6);
    const dims = [];
    for (let i = 0; i < rank; i++) dims.push(Number(M.HEAP64[(shapePtr >> 3) + i]));
    const type = typeName(code);
    const count = dims.reduce((p, d) => p * d, 1);
    if (type === 'string') {
      const strings = [];
      const lenPtr = M._malloc(4);
      const dec = new TextDecoder();
      for (let i = 0; i < count; i++) {
        const p = M._onyx_tensor_string(value, BigInt(i), lenPtr);
        const len = M.HEAPU32[lenPtr >> 2];
        strings.push(dec.decode(M.HEAPU8.slice(p, p + len)));
      }
      M._free(lenPtr);
      return new Tensor('string', strings, dims);
    }
    const A = arrayType(type);
    const copy = new A(count);
    new Uint8Array(copy.buffer).set(M.HEAPU8.subarray(dataPtr, dataPtr + nbytes));
    return new Tensor(type, copy, dims);
  } finally {
    M._free(info);
  }
}

export class InferenceSession {
  constructor(M, handle) {
    this._M = M;
    this._handle = handle;
    const names = (count, get) => {
      const r = [];
      for (let i = 0; i < count(handle); i++) r.push(M.UTF8ToString(get(handle, i)));
      return Object.freeze(r);
    };
    this.inputNames = names(M._onyx_session_input_count, M._onyx_session_input_name);
    this.outputNames = names(M._onyx_session_output_count, M._onyx_session_output_name);
    // the names as C strings, made once: a small model's run is otherwise
    // mostly these allocations
    this._namePtrs = new Map([...this.inputNames, ...this.outputNames].map((n) => [n, allocString(M, n)]));
  }

  _name(n, owned) {
    let p = this._namePtrs.get(n);
    if (p === undefined) {
      p = allocString(this._M, n);
      owned.push(p);
    }
    return p;
  }

  // InferenceSession.create(pathOrUrl | ArrayBuffer | Uint8Array [, byteOffset, byteLength], options)
  static async create(source, a, b, c) {
    let options = a;
    if (source instanceof ArrayBuffer && typeof a === 'number') {
      source = new Uint8Array(source, a, typeof b === 'number' ? b : source.byteLength - a);
      options = c;
    }
    const flags = sessionFlags(options ?? {});
    const M = await getModule();
    const bytes = await modelBytes(source);
    const buf = M._malloc(Math.max(bytes.length, 1));
    if (!buf) throw new Error(`onyx-wasm: out of memory for a model of ${bytes.length} bytes`);
    const out = M._malloc(4);
    try {
      M.HEAPU8.set(bytes, buf);
      check(M, M._onyx_wasm_session_create(buf, bytes.length, flags.opt, flags.log, out));
      return new InferenceSession(M, M.HEAPU32[out >> 2]);
    } finally {
      M._free(buf);
      M._free(out);
    }
  }

  // run(feeds [, fetches] [, options]): fetches is an array of output names
  // or an object keyed by output name; without it every output is returned.
  async run(feeds, fetches, options) {
    const M = this._M;
    if (!this._handle) throw new Error('the session has been released');
    if (!feeds || typeof feeds !== 'object' || feeds instanceof Tensor)
      throw new TypeError("'feeds' must be an object that uses input names as keys and Tensors as values");
    let outNames = this.outputNames;
    if (Array.isArray(fetches)) {
      outNames = fetches;
    } else if (fetches && typeof fetches === 'object' && Object.keys(fetches).some((k) => this.outputNames.includes(k))) {
      outNames = Object.keys(fetches);
    }
    if (!outNames.every((n) => typeof n === 'string')) throw new TypeError("'fetches' must hold output names");
    const inNames = Object.keys(feeds);
    const owned = [];
    const values = [];
    const outs = M._malloc(Math.max(outNames.length, 1) * 4);
    owned.push(outs);
    try {
      const inNamePtrs = M._malloc(Math.max(inNames.length, 1) * 4);
      owned.push(inNamePtrs);
      const inValPtrs = M._malloc(Math.max(inNames.length, 1) * 4);
      owned.push(inValPtrs);
      inNames.forEach((n, i) => {
        const s = this._name(n, owned);
        const v = inputValue(M, n, feeds[n], owned);
        values.push(v);
        M.HEAPU32[(inNamePtrs >> 2) + i] = s;
        M.HEAPU32[(inValPtrs >> 2) + i] = v;
      });
      const outNamePtrs = M._malloc(Math.max(outNames.length, 1) * 4);
      owned.push(outNamePtrs);
      outNames.forEach((n, i) => {
        const s = this._name(n, owned);
        M.HEAPU32[(outNamePtrs >> 2) + i] = s;
      });
      check(M, M._onyx_wasm_run(this._handle, inNamePtrs, inValPtrs, inNames.length, outNamePtrs,
                                outNames.length, outs));
      const result = {};
      const outVals = Array.from(M.HEAPU32.subarray(outs >> 2, (outs >> 2) + outNames.length));
      try {
        outNames.forEach((n, i) => { result[n] = outputTensor(M, outVals[i], n); });
      } finally {
        for (const v of outVals) M._onyx_value_free(v);
      }
      return result;
    } finally {
      for (const v of values) M._onyx_value_free(v);
      for (const p of owned) M._free(p);
    }
  }

  async release() {
    if (this._handle) {
      this._M._onyx_session_free(this._handle);
      for (const p of this._namePtrs.values()) this._M._free(p);
    }
    this._handle = 0;
  }

  startProfiling() {}
  endProfiling() {}
}
