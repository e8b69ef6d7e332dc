// The browser demo in a real headless browser: serves the checkout on
// 127.0.0.1, opens js/demo/index.html in Debian's chromium through
// playwright-core, draws a "1" on the canvas, reads the prediction from the
// page, checks it (it is 1, and it is the label onyx-wasm in Node.js gives
// for the same 8x8 input the page fed the model), and saves a screenshot.
//
//   node js/demo/test_demo.mjs SCREENSHOT.png
// Environment: PLAYWRIGHT_DIR (a folder with node_modules/playwright-core;
// default build-wasm/npm), CHROMIUM (default /usr/bin/chromium).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import * as onyx from '../lib/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const shot = process.argv[2] ?? join(root, 'build-wasm/demo.png');
const pwDir = resolve(process.env.PLAYWRIGHT_DIR ?? join(root, "build-wasm/npm"));
const { chromium } = createRequire(join(pwDir, 'package.json'))('playwright-core');

const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.cjs': 'text/javascript', '.mjs': 'text/javascript',
               '.wasm': 'application/wasm', '.onnx': 'application/octet-stream' };
const server = createServer(async (req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
  try {
    const body = await readFile(join(root, path));
    res.writeHead(200, { 'Content-Type': MIME[extname(path)] ?? 'application/octet-stream' });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/js/demo/index.html`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 520 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('ready'), null, { timeout: 60000 });
  // a "1": one stroke down the middle of the pad
  const box = await page.locator('#pad').boundingBox();
  await page.mouse.move(box.x + 136, box.y + 40);
  await page.mouse.down();
  for (let y = 40; y <= 216; y += 8) await page.mouse.move(box.x + 128 - (y - 40) / 30, box.y + y);
  await page.mouse.up();
  await page.waitForFunction(() => document.getElementById('prediction').dataset.label !== '', null, { timeout: 30000 });
  const label = await page.locator('#prediction').getAttribute('data-label');
  const input = (await page.locator('#prediction').getAttribute('data-input')).split(',').map(Number);
  await page.screenshot({ path: shot });
  assert.deepEqual(errors, []);
  // the same input through onyx-wasm in Node.js gives the same label
  const session = await onyx.InferenceSession.create(join(root, 'models/digits.onnx'));
  const out = await session.run({ image: new onyx.Tensor('float32', Float32Array.from(input), [1, 64]) });
  assert.equal(label, String(out.label.data[0]), 'the page and Node.js agree');
  assert.ok(input.reduce((a, b) => a + b, 0) > 20, 'the stroke reached the model input');
  assert.equal(label, '1', 'a vertical stroke is a 1');
  console.log(`demo: drew a 1, the page predicted ${label}; screenshot ${shot}`);
  console.log('1 passed, 0 failed');
} finally {
  await browser.close();
  server.close();
}
