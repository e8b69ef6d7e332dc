#!/usr/bin/env node
'use strict';
// Run ONNX backend-test folders through ONNX Runtime (onnxruntime-node 1.30) in one process:
// each CASE/test_data_set_0/input_K.pb feeds the K-th model input; the outputs go to
// OUT/<case name>/ as ort_run.js --dump writes them (NAME.bin float32 + outputs.json).
//   NODE_PATH=... node tests/llm/ort_cases.js SHARED_BENCH_DIR OUT CASE...
const fs = require('fs');
const path = require('path');

async function main() {
  const [benchDir, out, ...cases] = process.argv.slice(2);
  const io = require(path.join(path.resolve(benchDir), 'lib', 'io'));
  const ort = io.loadOrt();
  ort.env.logLevel = 'error';
  for (const c of cases) {
    const dir = path.join(out, path.basename(c));
    fs.mkdirSync(dir, { recursive: true });
    try {
      const s = await ort.InferenceSession.create(path.join(c, 'model.onnx'), {
        executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
      });
      const feeds = {};
      s.inputNames.forEach((name, k) => {
        const f = path.join(c, 'test_data_set_0', `input_${k}.pb`);
        const t = io.decodeTensor(fs.readFileSync(f));
        feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
      });
      const res = await s.run(feeds);
      io.dumpOutputs(dir, res, s.outputNames);
    } catch (e) {
      fs.writeFileSync(path.join(dir, 'error.txt'), String(e.message || e));
    }
  }
}

main().catch((e) => { console.error(`ort_cases.js: ${e.message}`); process.exit(1); });
