// onyx-wasm against onnxruntime-web (its single-threaded SIMD WebAssembly
// build) in one Node.js process: for each model, both sessions run the same
// inputs alternately (onyx, ORT, onyx, ORT...), the outputs are checked
// against ORT's (onnxruntime-web's, and onnxruntime-node's CPU library when
// it is installed) and the medians and their ratio are printed, then the
// sizes of the two WebAssembly modules and their glue.
//
//   node js/bench/compare.mjs [--models mlp,mobilenet_v2,...] [--dir DIR]
//        [--ort-web DIR] [--ort-node DIR] [--runs N] [--budget-s S] [--check-only]
//
// onnxruntime-web is not part of the repository: `npm install onnxruntime-web`
// into /var/tmp/onyx-wasm (the default --ort-web) or any folder outside it.
// Exits non-zero when an output does not match (rtol 1e-3, atol 1e-4).
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readNpz } from './npz.mjs';
import * as onyx from '../lib/index.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : true]);
  return acc;
}, []));
const dir = args.dir ?? '/var/tmp/onnx-bench/public';
const models = (args.models ?? 'mlp,mobilenet_v2,squeezenet1_1,resnet50,bert_base').split(',');
const ortWebDir = args['ort-web'] ?? '/var/tmp/onyx-wasm/node_modules/onnxruntime-web';
const ortNodeDir = args['ort-node'] ?? '/var/tmp/onnx-bench/ort/node_modules/onnxruntime-node';
const maxRuns = Number(args.runs ?? 50);
const budgetS = Number(args['budget-s'] ?? 30);
const rtol = 1e-3, atol = 1e-4;

const ort = await import(pathToFileURL(join(ortWebDir, 'dist/ort.node.min.mjs')).href);
ort.env.wasm.numThreads = 1;   // the single-threaded SIMD build
ort.env.wasm.simd = true;
const ortNode = existsSync(ortNodeDir) ? createRequire(import.meta.url)(ortNodeDir) : null;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// Largest |a-b| - (atol + rtol*|b|) over the elements (<= 0: within).
function mismatch(a, b) {
  if (a.length !== b.length) return { bad: a.length, worst: Infinity };
  let bad = 0, worst = -Infinity;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    const excess = Math.abs(x - y) - (atol + rtol * Math.abs(y));
    if (excess > 0 || Number.isNaN(x) !== Number.isNaN(y)) bad++;
    if (excess > worst) worst = excess;
  }
  return { bad, worst };
}

function checkOutputs(label, mine, ref) {
  let ok = true;
  for (const [name, t] of Object.entries(ref)) {
    const m = mine[name];
    if (!m || m.dims.join() !== t.dims.join()) {
      console.log(`  ${label}: output ${name}: shape [${m?.dims}] vs [${t.dims}]`);
      ok = false;
      continue;
    }
    const { bad, worst } = mismatch(m.data, t.data);
    if (bad) {
      console.log(`  ${label}: output ${name}: ${bad} of ${t.data.length} elements outside rtol ${rtol}, atol ${atol} (worst excess ${worst.toExponential(2)})`);
      ok = false;
    }
  }
  console.log(`  outputs vs ${label}: ${ok ? 'match' : 'MISMATCH'}`);
  return ok;
}

const results = [];
let allOk = true;
for (const name of models) {
  const model = join(dir, `${name}.onnx`);
  const npz = (await import('node:fs')).readdirSync(dir).find((f) => f.startsWith(`${name}.`) && f.endsWith('.npz'));
  if (!existsSync(model) || !npz) {
    console.log(`${name}: ${model} or its .npz inputs not found; skipped`);
    allOk = false;
    continue;
  }
  const inputs = readNpz(join(dir, npz));
  const feedsOnyx = {}, feedsOrt = {};
  for (const [k, v] of Object.entries(inputs)) {
    feedsOnyx[k] = new onyx.Tensor(v.type, v.data, v.dims);
    feedsOrt[k] = new ort.Tensor(v.type, v.data, v.dims);
  }
  console.log(`${name} (${npz}):`);
  let t0 = performance.now();
  const so = await onyx.InferenceSession.create(model);
  const loadOnyx = performance.now() - t0;
  t0 = performance.now();
  const sr = await ort.InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const loadOrt = performance.now() - t0;
  const outOnyx = await so.run(feedsOnyx);
  const outOrt = await sr.run(feedsOrt);
  allOk = checkOutputs('onnxruntime-web', outOnyx, outOrt) && allOk;
  if (ortNode) {
    const sn = await ortNode.InferenceSession.create(model, { intraOpNumThreads: 1 });
    const feedsNode = {};
    for (const [k, v] of Object.entries(inputs)) feedsNode[k] = new ortNode.Tensor(v.type, v.data, v.dims);
    allOk = checkOutputs('onnxruntime-node (ORT CPU)', outOnyx, await sn.run(feedsNode)) && allOk;
    await sn.release();
  }
  if (!args['check-only']) {
    // wall time, and the process's CPU time (both runtimes are
    // single-threaded here, so CPU time is the run's own work: steadier
    // than wall time on a loaded machine)
    const tOnyx = [], tOrt = [], cOnyx = [], cOrt = [];
    const timed = async (run, wall, cpu) => {
      const c = process.cpuUsage(), t = performance.now();
      await run();
      wall.push(performance.now() - t);
      const u = process.cpuUsage(c);
      cpu.push((u.user + u.system) / 1000);
    };
    await so.run(feedsOnyx);   // warm-up
    await sr.run(feedsOrt);
    const start = performance.now();
    for (let i = 0; i < maxRuns && performance.now() - start < budgetS * 1000; i++) {
      await timed(() => so.run(feedsOnyx), tOnyx, cOnyx);
      await timed(() => sr.run(feedsOrt), tOrt, cOrt);
    }
    const r = { model: name, runs: tOnyx.length, onyx_ms: median(tOnyx), ort_web_ms: median(tOrt),
                onyx_cpu_ms: median(cOnyx), ort_web_cpu_ms: median(cOrt), load_onyx_ms: loadOnyx, load_ort_ms: loadOrt };
    r.ratio = r.onyx_ms / r.ort_web_ms;
    r.cpu_ratio = r.onyx_cpu_ms / r.ort_web_cpu_ms;
    results.push(r);
    console.log(`  ${r.runs} alternating runs: onyx ${r.onyx_ms.toFixed(3)} ms, onnxruntime-web ${r.ort_web_ms.toFixed(3)} ms (median wall), ratio ${r.ratio.toFixed(2)}; ` +
                `CPU ${r.onyx_cpu_ms.toFixed(3)} vs ${r.ort_web_cpu_ms.toFixed(3)} ms, ratio ${r.cpu_ratio.toFixed(2)}; load ${loadOnyx.toFixed(0)} vs ${loadOrt.toFixed(0)} ms`);
  }
  await so.release();
  await sr.release();
}

if (results.length) {
  console.log('\n| model | runs | onyx-wasm ms | onnxruntime-web ms | ratio | onyx CPU ms | ORT CPU ms | CPU ratio |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results)
    console.log(`| ${r.model} | ${r.runs} | ${r.onyx_ms.toFixed(3)} | ${r.ort_web_ms.toFixed(3)} | ${r.ratio.toFixed(2)} | ` +
                `${r.onyx_cpu_ms.toFixed(3)} | ${r.ort_web_cpu_ms.toFixed(3)} | ${r.cpu_ratio.toFixed(2)} |`);
}

// sizes: the WebAssembly module plus its Emscripten glue, on each side
const here = dirname(fileURLToPath(import.meta.url));
const size = (p) => (existsSync(p) ? statSync(p).size : 0);
const onyxWasm = size(join(here, '../dist/onyx-wasm.wasm')), onyxGlue = size(join(here, '../dist/onyx-wasm.cjs'));
const ortWasm = size(join(ortWebDir, 'dist/ort-wasm-simd-threaded.wasm'));
const ortGlue = size(join(ortWebDir, 'dist/ort-wasm-simd-threaded.mjs'));
console.log(`\nsizes: onyx-wasm ${onyxWasm} + glue ${onyxGlue} = ${onyxWasm + onyxGlue} bytes; ` +
            `onnxruntime-web ${ortWasm} + glue ${ortGlue} = ${ortWasm + ortGlue} bytes; ` +
            `ratio ${((onyxWasm + onyxGlue) / (ortWasm + ortGlue)).toFixed(3)}`);
if (!allOk) {
  console.log('FAILED: outputs differ or models are missing');
  process.exit(1);
}
