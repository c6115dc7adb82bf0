#!/usr/bin/env node
// ONNX Runtime peer of the cpu backend benchmark (docs/performance.md): ONNX Runtime's CPU execution
// provider from the npm package onnxruntime-node, on the same ONNX network, input face and thread
// count as the other engines; warm median latency, faces/s, process CPU time, peak RSS, load time and
// the cosine against the fp32 reference; one JSON line in the schema bench/report.py reads.
//
//   node bench/ort_bench.mjs --install --ort-dir DIR
//       installs onnxruntime-node into DIR (npm install --ignore-scripts, only when absent); exit 0 when
//       it loads, else one JSON line saying why ONNX Runtime is skipped, exit 1
//   node bench/ort_bench.mjs --ort-dir DIR --threads N --face FACE.f32 --ref REF.f32
//       (--prefix PREFIX | --model FILE.onnx) [--label NAME] [--bundle PATH] [--no-spin] BATCH...
//       --prefix reads PREFIX.b<BATCH>.onnx (bench/torch_bench.py's static-shape export, one per batch);
//       --model runs one file for every batch: a file whose batch is fixed at 1 runs a batch of B
//       as B one-face calls (recorded as "per_face_calls"). --no-spin stops the idle pool threads
//       spinning (ONNX Runtime spins by default). BENCH_BUDGET_S: seconds per measurement (3).
// The network is never fetched: without the package the peer is skipped, saying why.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const started = process.hrtime.bigint();

function seconds(since) { return Number(process.hrtime.bigint() - since) / 1e9; }

function cpuSeconds() {
  const u = process.cpuUsage();  // user + system of every thread of the process, in microseconds
  return (u.user + u.system) / 1e6;
}

function peakRssMib() { return process.resourceUsage().maxRSS / 1024; }  // maxRSS is in KiB

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
}

function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < b.length; ++i) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

function round(x, digits) { return Number(x.toFixed(digits)); }

function parseArgs(argv) {
  const a = { batches: [], spin: true, install: false };
  const valued = { '--ort-dir': 'ortDir', '--threads': 'threads', '--face': 'face', '--ref': 'ref', '--prefix': 'prefix',
                   '--model': 'model', '--label': 'label', '--bundle': 'bundle' };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    if (flag === '--install') a.install = true;
    else if (flag === '--no-spin') a.spin = false;
    else if (flag in valued) {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      a[valued[flag]] = argv[++i];
    } else if (/^[0-9]+$/.test(flag)) a.batches.push(Number(flag));
    else throw new Error(`unknown argument ${flag}`);
  }
  if (!a.ortDir) throw new Error('--ort-dir DIR is needed');
  if (a.install) return a;
  a.threads = Number(a.threads);
  if (!Number.isInteger(a.threads) || a.threads < 1 || a.threads > 256) throw new Error('--threads must be 1..256');
  if (!a.face || !a.ref) throw new Error('--face FACE.f32 and --ref REF.f32 are needed');
  if (Boolean(a.prefix) === Boolean(a.model)) throw new Error('give one of --prefix PREFIX and --model FILE.onnx');
  if (a.batches.length === 0 || a.batches.some((b) => b < 1 || b > 256)) throw new Error('batch sizes must be 1..256');
  return a;
}

// The engine, or the reason it cannot be loaded.
function loadOrt(ortDir) {
  try {
    const require = createRequire(join(resolve(ortDir), 'package.json'));
    return { ort: require('onnxruntime-node') };
  } catch (e) {
    return { why: `onnxruntime-node does not load from ${ortDir}: ${String(e.message).split('\n')[0]}` };
  }
}

function skipped(why, extra = {}) {
  process.stderr.write(`ort_bench: ONNX Runtime skipped: ${why}\n`);
  console.log(JSON.stringify({ ...extra, backend: 'onnxruntime', skipped: why }));
}

// npm install --ignore-scripts: the package's install script would fetch GPU libraries; the CPU library
// is inside the package itself.
function install(ortDir) {
  if (!existsSync(join(ortDir, 'node_modules', 'onnxruntime-node'))) {
    const npm = spawnSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', ortDir,
                                  'onnxruntime-node'], { encoding: 'utf8', timeout: 600000 });
    if (npm.error || npm.status !== 0) {
      // npm's error code and the failed request ("npm error code ECONNREFUSED", "FetchError: ..."), not its stack
      const lines = `${npm.stderr || ''}${npm.error ? npm.error.message : ''}`.trim().split('\n');
      const said = lines.filter((l) => / code |Error:/.test(l) && !/^npm error +at /.test(l)).slice(0, 2).join(' / ') ||
                   lines.slice(-2).join(' / ');
      skipped(`npm install --ignore-scripts onnxruntime-node into ${ortDir} failed: ${said}`);
      return 1;
    }
  }
  const { ort, why } = loadOrt(ortDir);
  if (!ort) { skipped(why); return 1; }
  process.stderr.write(`ort_bench: onnxruntime-node ${ort.env.versions.node} ready in ${ortDir}\n`);
  return 0;
}

function readFloats(path) {
  const bytes = readFileSync(path);
  return new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4)).slice();
}

async function bench(a) {
  const importStart = process.hrtime.bigint();
  const { ort, why } = loadOrt(a.ortDir);
  if (!ort) { skipped(why, { bundle: a.bundle, model: a.label }); return 0; }
  const importSeconds = seconds(importStart);
  const face = readFloats(a.face), reference = readFloats(a.ref);
  if (face.length !== 3 * 112 * 112) throw new Error(`${a.face}: ${face.length} floats, not a 3x112x112 face`);
  const budget = Number(process.env.BENCH_BUDGET_S || 3);
  const options = {
    executionProviders: ['cpu'], intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    ...(a.spin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
  };
  let loadSeconds = null, loadCpuSeconds = null, cos = null, rssBatch1 = null, perFaceCalls = false, weightBytes = null;
  const results = {};
  for (const batch of a.batches) {
    const file = a.model || `${a.prefix}.b${batch}.onnx`;
    const loadStart = process.hrtime.bigint(), loadCpuStart = cpuSeconds();
    const session = await ort.InferenceSession.create(file, options);
    if (loadSeconds === null) {  // the first file's load, as opencv-dnn-bench counts it
      loadSeconds = seconds(loadStart);
      loadCpuSeconds = cpuSeconds() - loadCpuStart;
      weightBytes = statSync(file).size;
    }
    const fixedBatch = session.inputMetadata[0].shape[0];
    const perCall = fixedBatch === 1 && batch > 1 ? 1 : batch;  // a batch-1 file: B calls of one face
    perFaceCalls ||= perCall !== batch;
    const data = new Float32Array(perCall * face.length);
    for (let n = 0; n < perCall; ++n) data.set(face, n * face.length);
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, [perCall, 3, 112, 112]) };
    const once = async () => {
      const start = process.hrtime.bigint(), cpuStart = cpuSeconds();
      let out;
      for (let done = 0; done < batch; done += perCall) out = await session.run(feeds);
      const wall = seconds(start), cpu = cpuSeconds() - cpuStart;
      cos = cosine(out[session.outputNames[0]].data, reference);
      return { wall, cpu };
    };
    const warm = await once();  // excluded: the first run allocates and plans
    const reps = Math.max(2, Math.min(50, Math.floor(budget / Math.max(warm.wall, 1e-4))));
    const times = [], cpuTimes = [];
    for (let i = 0; i < reps; ++i) {
      const t = await once();
      times.push(t.wall);
      cpuTimes.push(t.cpu);
    }
    const t = median(times);
    results[String(batch)] = { median_ms: round(t * 1e3, 2), faces_per_s: round(batch / t, 2),
                               cpu_ms: round(median(cpuTimes) * 1e3, 2), reps };
    await session.release();
    if (batch === 1) rssBatch1 = peakRssMib();
  }
  const line = {
    ...(a.bundle ? { bundle: a.bundle } : {}), ...(a.label ? { model: a.label } : {}),
    backend: 'onnxruntime', precision: 'f32', threads: a.threads, onnxruntime: ort.env.versions.node,
    node: process.version, options: { ...options, extra: undefined, allow_spinning: a.spin },
    import_s: round(importSeconds, 3), load_s: round(loadSeconds, 3), load_cpu_s: round(loadCpuSeconds, 3),
    peak_rss_mib: round(peakRssMib(), 1), ...(rssBatch1 !== null ? { rss_batch1_mib: round(rssBatch1, 1) } : {}),
    ...(a.model ? { weight_bytes: weightBytes } : {}), per_face_calls: perFaceCalls, cosine_fp32: round(cos, 6),
    batches: results, process_s: round(seconds(started), 2),
  };
  console.log(JSON.stringify(line));
  return 0;
}

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`ort_bench: ${e.message}\n`);
  process.exit(2);
}
if (args.install) {
  process.exitCode = install(args.ortDir);
} else {
  try {
    process.exitCode = await bench(args);
  } catch (e) {  // a run that fails says so in the results, and the bench's other engines go on
    const why = String(e.message).split('\n')[0];
    process.stderr.write(`ort_bench: ${e.stack}\n`);
    console.log(JSON.stringify({ ...(args.bundle ? { bundle: args.bundle } : {}), ...(args.label ? { model: args.label } : {}),
                                 backend: 'onnxruntime', failed: why }));
    process.exitCode = 1;
  }
}
