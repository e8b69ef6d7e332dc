// Tensor: onnxruntime-web's Tensor (type, data, dims, size), enough of it
// that code written for onnxruntime-web runs unchanged on CPU tensors.

// ORT's type names <-> ONNX TensorProto.DataType numbers (onyx_element_type),
// and the typed array each one is held in.
const TYPES = {
  float32: { code: 1, array: Float32Array },
  uint8: { code: 2, array: Uint8Array },
  int8: { code: 3, array: Int8Array },
  uint16: { code: 4, array: Uint16Array },
  int16: { code: 5, array: Int16Array },
  int32: { code: 6, array: Int32Array },
  int64: { code: 7, array: BigInt64Array },
  string: { code: 8, array: Array },
  bool: { code: 9, array: Uint8Array },
  float16: { code: 10, array: Uint16Array },
  float64: { code: 11, array: Float64Array },
  uint32: { code: 12, array: Uint32Array },
  uint64: { code: 13, array: BigUint64Array },
};

const BY_CODE = new Map(Object.entries(TYPES).map(([name, t]) => [t.code, name]));

export function typeCode(type) {
  const t = TYPES[type];
  if (!t) throw new TypeError(`unsupported tensor type: ${type}`);
  return t.code;
}

export function typeName(code) {
  const name = BY_CODE.get(code);
  if (!name) throw new TypeError(`output element type ${code} (ONNX TensorProto.DataType) has no JavaScript tensor type`);
  return name;
}

export function arrayType(type) {
  return TYPES[type].array;
}

// The type a typed array stands for when no type is given (ORT's rules).
function inferType(data) {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof BigUint64Array) return 'uint64';
  if (data instanceof Uint8Array || data instanceof Uint8ClampedArray) return 'uint8';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Uint32Array) return 'uint32';
  if (Array.isArray(data) && data.every((s) => typeof s === 'string')) return 'string';
  if (Array.isArray(data) && data.every((b) => typeof b === 'boolean')) return 'bool';
  throw new TypeError('Tensor: cannot infer the type of the data; give it as the first argument');
}

// Plain arrays of numbers become the type's typed array (as ORT does).
function toData(type, data) {
  const A = TYPES[type].array;
  if (type === 'string') {
    if (!Array.isArray(data) || !data.every((s) => typeof s === 'string'))
      throw new TypeError("Tensor: a 'string' tensor takes an array of strings");
    return data;
  }
  if (data instanceof A) return data;
  if (type === 'bool' && Array.isArray(data)) return Uint8Array.from(data, (b) => (b ? 1 : 0));
  if (Array.isArray(data)) {
    if (A === BigInt64Array || A === BigUint64Array) return A.from(data, (v) => BigInt(v));
    return A.from(data);
  }
  if (type === 'uint8' && data instanceof Uint8ClampedArray) return new Uint8Array(data.buffer, data.byteOffset, data.length);
  throw new TypeError(`Tensor: data for type '${type}' must be a ${A.name} or an array`);
}

export class Tensor {
  // new Tensor(type, data, dims?) or new Tensor(data, dims?)
  constructor(a, b, c) {
    let type, data, dims;
    if (typeof a === 'string') {
      type = a;
      data = b;
      dims = c;
    } else {
      data = a;
      dims = b;
      type = inferType(data);
    }
    if (!TYPES[type]) throw new TypeError(`Tensor: unsupported type '${type}'`);
    data = toData(type, data);
    if (dims === undefined) dims = [data.length];
    if (!Array.isArray(dims) || !dims.every((d) => Number.isInteger(d) && d >= 0))
      throw new TypeError('Tensor: dims must be an array of non-negative integers');
    const size = dims.reduce((p, d) => p * d, 1);
    if (size !== data.length)
      throw new RangeError(`Tensor: dims [${dims}] hold ${size} elements but the data has ${data.length}`);
    this.type = type;
    this.data = data;
    this.dims = Object.freeze(dims.slice());
    this.size = size;
    this.location = 'cpu';
  }

  async getData(releaseData) {
    const d = this.data;
    if (releaseData) this.data = undefined;
    return d;
  }

  dispose() {
    this.data = undefined;
  }

  reshape(dims) {
    return new Tensor(this.type, this.data, dims);
  }
}
