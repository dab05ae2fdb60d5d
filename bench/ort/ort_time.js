// Times ONNX Runtime (npm onnxruntime-node, CPU) on one model with random inputs of the model's
// static input shapes: node ort_time.js MODEL THREADS WARMUP REPEAT
// Prints {"median_ms": ..., "runs_ms": [...]} (milliseconds per session.run).
const ort = require('onnxruntime-node');
const [model, threads, warmup, repeat] = process.argv.slice(2);
(async () => {
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const {name, type, shape} of session.inputMetadata) {
    const n = shape.reduce((a, b) => a * b, 1);
    feeds[name] = type === 'int64'
        ? new ort.Tensor('int64', BigInt64Array.from({length: n}, (_, i) => BigInt(i % 7)), shape)
        : new ort.Tensor('float32', Float32Array.from({length: n}, () => Math.random() * 2 - 1), shape);
  }
  const runs = [];
  for (let i = 0; i < Number(warmup) + Number(repeat); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (i >= Number(warmup)) runs.push(ms);
  }
  const sorted = [...runs].sort((a, b) => a - b);
  console.log(JSON.stringify({median_ms: sorted[Math.floor(sorted.length / 2)], runs_ms: runs}));
})().catch((e) => { console.error(String(e)); process.exit(1); });
