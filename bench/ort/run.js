#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node, CPU) as a peer of ftrun in bench/run.py.
//
//   node bench/ort/run.js MODEL.onnx [-i NAME=FILE.npy]... [--threads T] [-w W] [-n N] [-o DIR]
//                         [--profile FILE]
//
// Loads MODEL with graph optimization level "all", intra-op threads T
// (default 1), one inter-op thread, sequential execution; feeds the inputs
// from .npy files; does W untimed then N timed runs of session.run and prints
// one JSON line: {"median_ms", "min_ms", "times_ms", "load_ms", "outputs",
// "ort", "require_ms", "start_rss_kb", "peak_rss_kb"}: require_ms is the
// time to load onnxruntime-node's library, load_ms session creation,
// start_rss_kb the process's peak resident memory before the library
// loaded (node alone) and peak_rss_kb its peak at the end, both Linux's
// VmHWM (getrusage's maxRSS would count the process that started node;
// null where /proc cannot be read). bench/cold.py takes ONNX Runtime's
// first result and memory from these. With -o it writes each output as DIR/NAME.npy (NAME with characters
// other than [A-Za-z0-9._-] replaced by "_", as ftrun names its output files).
// With --profile, ONNX Runtime's profiler records every run (so the times
// printed include its overhead): its trace goes to FILE (Chrome trace-event
// JSON) and a table of the nodes' kernel times in the timed runs, mean per
// run, most first, to stderr (compare `ftrun MODEL --profile`).
// Errors go to stderr with exit status 1 (2 for bad arguments).
//
// Install the runtime first: `make bench-deps` (or, in bench/ort,
// `ONNXRUNTIME_NODE_INSTALL=skip npm ci`); see bench/README.md.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  process.stderr.write('run.js: ' + msg + '\nusage: node bench/ort/run.js MODEL.onnx [-i NAME=FILE.npy]... ' +
                       '[--threads T] [-w W] [-n N] [-o DIR] [--profile FILE]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { model: null, inputs: [], threads: 1, warmup: 3, iterations: 10, out: null, profile: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) usage(k + ' needs a value'); return argv[++i]; };
    const int = (lo) => { const v = Number(val()); if (!Number.isInteger(v) || v < lo) usage(k + ' must be an integer >= ' + lo); return v; };
    if (k === '-i') {
      const s = val(); const eq = s.indexOf('=');
      if (eq <= 0) usage('-i wants NAME=FILE.npy, not ' + s);
      a.inputs.push([s.slice(0, eq), s.slice(eq + 1)]);
    } else if (k === '--threads') a.threads = int(1);
    else if (k === '-w') a.warmup = int(0);
    else if (k === '-n') a.iterations = int(1);
    else if (k === '-o') a.out = val();
    else if (k === '--profile') a.profile = val();
    else if (k.startsWith('-')) usage('unknown option ' + k);
    else if (a.model === null) a.model = k;
    else usage('one model only');
  }
  if (a.model === null) usage('no model');
  return a;
}

// --- .npy (format versions 1-3, little-endian, C order) ----------------------

// numpy descr -> [ONNX Runtime tensor type, typed array constructor]
const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array],
  '|i1': ['int8', Int8Array], '<u8': ['uint64', BigUint64Array], '<u4': ['uint32', Uint32Array],
  '<u2': ['uint16', Uint16Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(file + ': bad .npy header ' + header.trim());
  let d = descr[1];
  if (d === '=f4' || d === '=f8' || d === '=i8' || d === '=i4') d = '<' + d.slice(1);
  if (!(d in DTYPES)) throw new Error(file + ': dtype ' + d + ' not supported');
  if (fortran[1] === 'True') throw new Error(file + ': Fortran order not supported');
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((x, y) => x * y, 1);
  const [type, Ctor] = DTYPES[d];
  const off = start + hlen;
  const bytes = count * Ctor.BYTES_PER_ELEMENT;
  if (buf.length - off < bytes) throw new Error(file + ': truncated (' + (buf.length - off) + ' of ' + bytes + ' bytes)');
  const copy = new ArrayBuffer(bytes); // aligned for the typed array
  new Uint8Array(copy).set(buf.subarray(off, off + bytes));
  let data = new Ctor(copy);
  if (type === 'bool') data = Uint8Array.from(data, (x) => (x ? 1 : 0));
  return { type, dims, data };
}

const DESCR = {
  float32: '<f4', float64: '<f8', int64: '<i8', int32: '<i4', int16: '<i2', int8: '|i1',
  uint64: '<u8', uint32: '<u4', uint16: '<u2', uint8: '|u1', bool: '|b1',
};

function writeNpy(file, tensor) {
  const d = DESCR[tensor.type];
  if (!d) throw new Error('output type ' + tensor.type + ' cannot be written as .npy');
  const dims = tensor.dims.map(Number);
  const shape = dims.length === 1 ? '(' + dims[0] + ',)' : '(' + dims.join(', ') + ')';
  let header = "{'descr': '" + d + "', 'fortran_order': False, 'shape': " + shape + ', }';
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = tensor.type === 'bool'
    ? Buffer.from(Uint8Array.from(data, (x) => (x ? 1 : 0)))
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const tmp = file + '.tmp';
  fs.writeFileSync(tmp, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
  fs.renameSync(tmp, file);
}

// The kernel times of ONNX Runtime's trace in the runs after the first
// `skip` (the warm-ups): per node, mean per run, most first, as a table on stderr.
function profileTable(trace, skip) {
  const events = JSON.parse(fs.readFileSync(trace, 'utf8'));
  const runsAt = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').map((e) => e.ts + e.dur)
    .sort((x, y) => x - y);
  const from = skip > 0 && runsAt.length >= skip ? runsAt[skip - 1] : -Infinity;
  const runs = runsAt.length - (skip > 0 ? Math.min(skip, runsAt.length) : 0);
  if (runs < 1) throw new Error(trace + ': no timed run in the profile');
  const nodes = new Map();
  let total = 0;
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < from) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    const n = nodes.get(name) || { op: (e.args && e.args.op_name) || '?', us: 0 };
    n.us += e.dur;
    total += e.dur;
    nodes.set(name, n);
  }
  const rows = [...nodes.entries()].sort((x, y) => y[1].us - x[1].us);
  const lines = ['run.js: ONNX Runtime profile over ' + runs + ' runs (mean per run), ' + rows.length +
                 ' nodes, ' + (total / runs / 1e3).toFixed(3) + ' ms in kernels:',
                 '  ' + 'node'.padEnd(48) + ' ' + 'op'.padEnd(24) + ' ' + 'ms'.padStart(9) + ' ' + '%'.padStart(6)];
  for (const [name, n] of rows) {
    lines.push('  ' + name.slice(0, 48).padEnd(48) + ' ' + n.op.slice(0, 24).padEnd(24) + ' ' +
               (n.us / runs / 1e3).toFixed(3).padStart(9) + ' ' + (100 * n.us / total).toFixed(1).padStart(6));
  }
  process.stderr.write(lines.join('\n') + '\n');
}

// Peak resident memory of this process image in KiB (VmHWM), or null.
function peakRssKb() {
  try {
    const m = /^VmHWM:\s*(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'latin1'));
    return m ? Number(m[1]) : null;
  } catch (e) {
    return null;
  }
}

function sanitise(name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

// --- the run -----------------------------------------------------------------

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const startRssKb = peakRssKb();
  const tr = process.hrtime.bigint();
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    process.stderr.write('run.js: onnxruntime-node is not installed (make bench-deps): ' + e.message + '\n');
    process.exit(1);
  }
  const requireMs = Number(process.hrtime.bigint() - tr) / 1e6;
  const t0 = process.hrtime.bigint();
  const opts = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  if (a.profile) Object.assign(opts, { enableProfiling: true, profileFilePrefix: a.profile + '.ort' });
  const session = await ort.InferenceSession.create(a.model, opts);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  for (const [name, file] of a.inputs) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  for (const name of session.inputNames) {
    if (!(name in feeds)) throw new Error(a.model + ': input "' + name + '" not given (-i ' + name + '=FILE.npy)');
  }
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const times = [];
  let out = null;
  for (let i = 0; i < a.iterations; i++) {
    const s = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const sorted = times.slice().sort((x, y) => x - y);
  const m = sorted.length;
  const median = m % 2 ? sorted[(m - 1) / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
  if (a.out) {
    fs.mkdirSync(a.out, { recursive: true });
    for (const name of session.outputNames) writeNpy(path.join(a.out, sanitise(name) + '.npy'), out[name]);
  }
  if (a.profile) {
    session.endProfiling();
    const dir = path.dirname(path.resolve(a.profile));
    const base = path.basename(a.profile) + '.ort';
    const found = fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json'))
      .map((f) => path.join(dir, f)).sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs);
    if (!found.length) throw new Error('no profile written under ' + path.join(dir, base) + '*');
    fs.renameSync(found[0], a.profile);
    profileTable(a.profile, a.warmup);
  }
  process.stdout.write(JSON.stringify({
    median_ms: median, min_ms: sorted[0], times_ms: times, load_ms: loadMs,
    outputs: session.outputNames, ort: ort.env.versions.node, threads: a.threads,
    require_ms: requireMs, start_rss_kb: startRssKb, peak_rss_kb: peakRssKb(),
  }) + '\n');
  await session.release();
}

main().catch((e) => {
  process.stderr.write('run.js: ' + (e && e.message ? e.message : String(e)) + '\n');
  process.exit(1);
});
