#!/usr/bin/env node
'use strict';
// Per-call latency of onnxruntime-node's session.run, in microseconds, for
// bench/ort_abi_latency.sh (which runs it on ONNX Runtime's own library and
// on onyx's libonnxruntime.so.1 through LD_LIBRARY_PATH).
//
//   node bench/ort_abi_latency.js MODEL.onnx NPZ THREADS RUNS
//
// ort_run.js reports milliseconds to 3 decimals (1 us steps); a model that
// runs in 5 us needs finer figures, so this prints {median_us, min_us, p90_us}
// to 0.01 us over RUNS timed calls after RUNS/10 warm-ups.
const path = require('path');
const io = require(path.join(__dirname, '..', '..', 'shared', 'bench', 'lib', 'io'));

async function main() {
  const [model, npz, threadsArg, runsArg] = process.argv.slice(2);
  if (!model || !npz) {
    console.error('usage: node bench/ort_abi_latency.js MODEL.onnx NPZ [THREADS] [RUNS]');
    process.exit(2);
  }
  const threads = parseInt(threadsArg || '1', 10);
  const runs = parseInt(runsArg || '2000', 10);
  const ort = io.loadOrt();
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: threads,
    interOpNumThreads: 1, executionMode: 'sequential',
  });
  const arrays = io.readNpz(npz);
  const feeds = {};
  for (const m of session.inputMetadata) {
    const t = arrays[m.name];
    if (!t) throw new Error(`no value for input '${m.name}' in ${npz}`);
    feeds[m.name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  for (let i = 0; i < Math.max(3, runs / 10); i++) await session.run(feeds);
  const us = new Float64Array(runs);
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    us[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  us.sort();
  const r2 = (x) => Math.round(x * 100) / 100;
  const med = runs % 2 ? us[(runs - 1) / 2] : (us[runs / 2 - 1] + us[runs / 2]) / 2;
  console.log(JSON.stringify({ model: path.basename(model), threads, runs, median_us: r2(med),
    min_us: r2(us[0]), p90_us: r2(us[Math.min(runs - 1, Math.ceil(0.9 * runs) - 1)]) }));
  await session.release();
}
main().catch((e) => { console.error(`ort_abi_latency.js: ${e && e.message ? e.message : e}`); process.exit(1); });
