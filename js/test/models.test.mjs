// The generated models of make_models.py through onyx-wasm, against
// numpy's outputs (rtol 1e-3, atol 1e-4 for floats; exact for the others).
// ONYX_WASM_TEST_MODELS names the folder make_models.py wrote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readNpz } from '../bench/npz.mjs';
import { InferenceSession, Tensor } from '../lib/index.js';

const dir = process.env.ONYX_WASM_TEST_MODELS;
if (!dir) throw new Error('set ONYX_WASM_TEST_MODELS to the folder written by js/test/make_models.py');

function assertClose(name, got, want) {
  assert.deepEqual(got.dims, want.dims, `${name}: shape`);
  for (let i = 0; i < want.data.length; i++) {
    const g = got.data[i], w = want.data[i];
    if (want.type === 'float32') {
      const ok = Math.abs(g - w) <= 1e-4 + 1e-3 * Math.abs(w);
      if (!ok) assert.fail(`${name}[${i}]: got ${g}, expected ${w}`);
    } else {
      assert.equal(g, w, `${name}[${i}]`);
    }
  }
}

const names = readdirSync(dir).filter((f) => f.endsWith('.onnx')).map((f) => f.slice(0, -5)).sort();
test('the generated models are there', () => assert.ok(names.length >= 8, `only ${names.length} models in ${dir}`));

for (const name of names) {
  test(`${name} matches numpy`, async () => {
    const arrays = readNpz(join(dir, `${name}.npz`));
    const feeds = {}, expected = {};
    for (const [k, v] of Object.entries(arrays)) {
      if (k.startsWith('expected:')) expected[k.slice(9)] = v;
      else feeds[k] = new Tensor(v.type, v.data, v.dims);
    }
    let strings = null;
    if (name === 'types') {
      strings = readFileSync(join(dir, 'types.strings.txt'), 'utf8').split('\n');
      feeds.s = new Tensor('string', strings, [strings.length]);
    }
    const session = await InferenceSession.create(join(dir, `${name}.onnx`));
    const out = await session.run(feeds);
    for (const [k, want] of Object.entries(expected)) {
      assert.equal(out[k].type, want.type, `${k}: type`);
      assertClose(k, out[k], want);
    }
    if (strings) {
      assert.equal(out.s_out.type, 'string');
      assert.deepEqual(out.s_out.data, strings);
    }
    await session.release();
  });
}
