// Reading numpy .npy / .npz files (numpy.save / numpy.savez) into
// { name: { type, data, dims } } with onnxruntime-web's type names, for the
// benchmark and output-check scripts. .npz is a zip of .npy members, stored
// or deflated.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
  '|b1': ['bool', Uint8Array], '<u8': ['uint64', BigUint64Array], '<i2': ['int16', Int16Array],
  '<u2': ['uint16', Uint16Array], '<f2': ['float16', Uint16Array],
};

export function parseNpy(buf) {
  if (buf.readUInt32BE(0) !== 0x934e554d) throw new Error('not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error('fortran-order arrays are not supported');
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((s) => s.trim()).map(Number);
  const t = DTYPES[descr];
  if (!t) throw new Error(`npy dtype ${descr} is not supported`);
  const count = dims.reduce((p, d) => p * d, 1);
  const bytes = buf.subarray(off + hlen, off + hlen + count * t[1].BYTES_PER_ELEMENT);
  const data = new t[1](count);
  new Uint8Array(data.buffer).set(bytes);
  return { type: t[0], data, dims };
}

export function readNpz(path) {
  const buf = readFileSync(path);
  // the central directory, found through the end-of-central-directory record
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error(`${path}: not a zip file`);
  const n = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = {};
  for (let i = 0; i < n; i++) {
    const method = buf.readUInt16LE(p + 10);
    let csize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30), commentLen = buf.readUInt16LE(p + 32);
    let local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    // zip64: sizes and offset in the extra field
    if (csize === 0xffffffff || local === 0xffffffff) {
      let e = p + 46 + nameLen;
      const end = e + extraLen;
      while (e < end) {
        const id = buf.readUInt16LE(e), sz = buf.readUInt16LE(e + 2);
        if (id === 1) {
          let q = e + 4;
          if (buf.readUInt32LE(p + 24) === 0xffffffff) q += 8;
          if (csize === 0xffffffff) { csize = Number(buf.readBigUInt64LE(q)); q += 8; }
          if (local === 0xffffffff) local = Number(buf.readBigUInt64LE(q));
        }
        e += 4 + sz;
      }
    }
    const dataStart = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataStart, dataStart + csize);
    const member = method === 0 ? raw : method === 8 ? inflateRawSync(raw) : null;
    if (!member) throw new Error(`${path}: ${name}: zip method ${method} is not supported`);
    out[name.replace(/\.npy$/, '')] = parseNpy(member);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}
