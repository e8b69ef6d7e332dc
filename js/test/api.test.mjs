// onyx-wasm's onnxruntime-web API on the shipped digits model
// (models/digits.onnx, models/digits_test.bin): sessions from a path and
// from bytes, the whole test set classified as scikit-learn does, fetches,
// the Tensor constructor, and every misuse rejected with onyx's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as ort from '../lib/index.js';

const { InferenceSession, Tensor, env } = ort;
const root = fileURLToPath(new URL('../../', import.meta.url));
const modelPath = root + 'models/digits.onnx';

// digits_test.bin: u32 count, then per image 64 little-endian float32
// pixels and a u64 label (scripts/make_digits_model.py, examples/digits.c)
function testSet() {
  const buf = readFileSync(root + 'models/digits_test.bin');
  const count = buf.readUInt32LE(0);
  const pixels = new Float32Array(count * 64);
  const labels = [];
  for (let i = 0; i < count; i++) {
    const rec = 4 + i * 264;
    for (let k = 0; k < 64; k++) pixels[i * 64 + k] = buf.readFloatLE(rec + 4 * k);
    labels.push(Number(buf.readBigUInt64LE(rec + 256)));
  }
  return { count, pixels, labels };
}

test('env has the onnxruntime-web settings', () => {
  assert.equal(env.wasm.numThreads, 1);
  assert.equal(env.wasm.simd, true);
});

test('session from a path: names and the test set at 97.33%', async () => {
  const s = await InferenceSession.create(modelPath);
  assert.deepEqual([...s.inputNames], ['image']);
  assert.deepEqual([...s.outputNames], ['probabilities', 'label']);
  const { count, pixels, labels } = testSet();
  assert.equal(count, 450);
  const out = await s.run({ image: new Tensor('float32', pixels, [count, 64]) });
  assert.equal(out.label.type, 'int64');
  assert.ok(out.label.data instanceof BigInt64Array);
  assert.deepEqual(out.label.dims, [count]);
  assert.deepEqual(out.probabilities.dims, [count, 10]);
  let right = 0;
  for (let i = 0; i < count; i++) {
    const p = out.probabilities.data.subarray(i * 10, i * 10 + 10);
    const best = p.indexOf(Math.max(...p));
    assert.equal(BigInt(best), out.label.data[i], `image ${i}: label is the argmax`);
    const sum = p.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `image ${i}: probabilities sum to ${sum}`);
    if (best === labels[i]) right++;
  }
  // the accuracy scikit-learn and ONNX Runtime give for this model
  assert.equal(right, 438);
  await s.release();
});

test('session from bytes (ArrayBuffer, Uint8Array, offset) and fetches', async () => {
  const bytes = readFileSync(modelPath);
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const x = new Tensor('float32', new Float32Array(64).fill(4), [1, 64]);
  const padded = new Uint8Array(ab.byteLength + 16);
  padded.set(new Uint8Array(ab), 16);
  const sessions = [
    await InferenceSession.create(ab),
    await InferenceSession.create(new Uint8Array(ab), { executionProviders: ['wasm'], graphOptimizationLevel: 'disabled' }),
    await InferenceSession.create(padded.buffer, 16, ab.byteLength, { executionProviders: ['cpu'] }),
  ];
  const ref = (await sessions[0].run({ image: x })).probabilities.data;
  for (const s of sessions) {
    const all = await s.run({ image: x });
    assert.deepEqual([...all.probabilities.data], [...ref]);
    const only = await s.run({ image: x }, ['label']);
    assert.deepEqual(Object.keys(only), ['label']);
    assert.equal(only.label.data[0], all.label.data[0]);
    const byObject = await s.run({ image: x }, { probabilities: null });
    assert.deepEqual(Object.keys(byObject), ['probabilities']);
    await s.release();
  }
});

test('Tensor: types, inference from typed arrays, checks', () => {
  const t = new Tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  assert.equal(t.type, 'float32');
  assert.equal(t.size, 6);
  assert.deepEqual(t.dims, [2, 3]);
  assert.equal(new Tensor('int64', [1, 2]).data.constructor, BigInt64Array);
  assert.equal(new Tensor('bool', [true, false]).data.constructor, Uint8Array);
  assert.equal(new Tensor(new Int32Array(2)).type, 'int32');
  assert.equal(new Tensor('string', ['a', 'b']).type, 'string');
  assert.deepEqual(t.reshape([3, 2]).dims, [3, 2]);
  assert.throws(() => new Tensor('float32', new Float32Array(5), [2, 3]), /hold 6 elements but the data has 5/);
  assert.throws(() => new Tensor('complex64', [1]), /unsupported type/);
  assert.throws(() => new Tensor('float32', new Int32Array(2)), /must be a Float32Array/);
});

test('misuse is a rejected promise with onyx\'s message, and the session still works', async () => {
  const s = await InferenceSession.create(modelPath);
  const good = new Tensor('float32', new Float32Array(64), [1, 64]);
  await assert.rejects(s.run({ pixels: good }), /'pixels' is not an input of the model \(its inputs: image\)/);
  await assert.rejects(s.run({}), /image/);
  await assert.rejects(s.run({ image: new Tensor('float32', new Float32Array(63), [1, 63]) }),
                       /input 'image': dimension 1 must be 64, got shape \[1,63\]/);
  await assert.rejects(s.run({ image: new Tensor('int32', new Int32Array(64), [1, 64]) }),
                       /input 'image': expected element type float32, got int32/);
  await assert.rejects(s.run({ image: good }, ['nope']), /nope/);
  await assert.rejects(s.run({ image: [1, 2, 3] }), /input 'image' must be a Tensor/);
  await assert.rejects(s.run(null), /'feeds' must be an object/);
  const out = await s.run({ image: good });
  assert.equal(out.probabilities.dims[1], 10);
  await s.release();
  await assert.rejects(s.run({ image: good }), /released/);
});

test('bad models and options are rejected, not crashes', async () => {
  await assert.rejects(InferenceSession.create(new Uint8Array([1, 2, 3, 4, 5])), (e) => e instanceof Error && e.message.length > 0);
  const bytes = new Uint8Array(readFileSync(modelPath));
  for (const cut of [10, 100, bytes.length >> 1, bytes.length - 1])
    await assert.rejects(InferenceSession.create(bytes.subarray(0, cut)), Error, `truncated at ${cut}`);
  await assert.rejects(InferenceSession.create(root + 'models/no_such_model.onnx'), /ENOENT/);
  await assert.rejects(InferenceSession.create(modelPath, { executionProviders: ['webgpu'] }),
                       /execution provider 'webgpu' is not available/);
  await assert.rejects(InferenceSession.create(modelPath, { graphOptimizationLevel: 'max' }), /graphOptimizationLevel/);
  await assert.rejects(InferenceSession.create(42), /expected a model path/);
});
