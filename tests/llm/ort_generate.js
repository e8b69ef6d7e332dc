#!/usr/bin/env node
'use strict';
// Reference greedy generation with ONNX Runtime (onnxruntime-node 1.30): the loop of
// `onyx generate` (prefill, then one run per token with the present outputs fed back as
// past_key_values), for models in ONNX Runtime's generation layout.
//
//   NODE_PATH=.../node_modules node tests/llm/ort_generate.js MODEL --input-ids 1,2,3
//       [--max-new-tokens N] [--threads T]
//
// Prints one JSON line: {ids, margins (best minus second-best logit per step), prefill_ms,
// decode_ms, decode_steps, load_ms, peak_rss_mb}.
const ort = require('onnxruntime-node');

function args(argv) {
  const a = { maxNew: 16, threads: 1 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--input-ids') a.ids = argv[++i].split(',').map((x) => BigInt(x));
    else if (k === '--max-new-tokens') a.maxNew = parseInt(argv[++i], 10);
    else if (k === '--threads') a.threads = parseInt(argv[++i], 10);
    else if (!a.model) a.model = k;
    else throw new Error(`unexpected argument ${k}`);
  }
  if (!a.model || !a.ids) throw new Error('usage: ort_generate.js MODEL --input-ids 1,2,3');
  return a;
}

function top2(logits, off, n) {
  let b = -Infinity, s = -Infinity, bi = 0;
  for (let i = 0; i < n; i++) {
    const v = logits[off + i];
    if (v > b) { s = b; b = v; bi = i; } else if (v > s) s = v;
  }
  return [bi, b - s];
}

async function main() {
  const a = args(process.argv.slice(2));
  ort.env.logLevel = 'error';
  let t = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'], intraOpNumThreads: a.threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  const loadMs = Number(process.hrtime.bigint() - t) / 1e6;
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata ? session.inputMetadata : null;
  // kv heads and head size from the first past input's metadata, else from a probe run
  let kv, hd;
  if (meta) {
    const m = Array.isArray(meta) ? meta.find((x) => x.name === pasts[0]) : meta[pasts[0]];
    if (m && m.shape) { kv = m.shape[1]; hd = m.shape[3]; }
  }
  if (!(kv > 0 && hd > 0)) throw new Error('cannot read kv_heads/head_size of ' + pasts[0]);
  const feeds = {};
  for (const p of pasts) feeds[p] = new ort.Tensor('float32', new Float32Array(0), [1, kv, 0, hd]);
  let tokens = a.ids, past = 0;
  const ids = [], margins = [];
  let prefillMs = 0, decodeMs = 0, steps = 0;
  while (ids.length < a.maxNew) {
    const n = tokens.length, total = past + n;
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(tokens), [1, n]);
    feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]);
    t = process.hrtime.bigint();
    const out = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (past === 0) prefillMs = ms; else { decodeMs += ms; steps++; }
    const logits = out.logits, V = logits.dims[2];
    const [next, margin] = top2(logits.data, (n - 1) * V, V);
    ids.push(next);
    margins.push(margin);
    for (const p of pasts) feeds[p] = out[p.replace('past_key_values.', 'present.')];
    past = total;
    tokens = [BigInt(next)];
  }
  console.log(JSON.stringify({
    ids, margins, prefill_ms: prefillMs, decode_ms: decodeMs, decode_steps: steps, load_ms: loadMs,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  }));
}

main().catch((e) => { console.error(`ort_generate.js: ${e.message}`); process.exit(1); });
