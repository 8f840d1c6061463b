// What `npm run deploy` needs from wrangler.toml, read line by line (the file is ours and keeps to simple
// `key = "value"` lines inside its tables), and the one edit it makes: a D1 database's id written in place.

/** The ids the repository ships with: a database that does not exist yet. */
export const PLACEHOLDER_ID = /^0{8}-0{4}-0{4}-0{4}-0{12}$|^0{8}-0{4}-0{4}-0{4}-0{11}\d$/;

/** Vectorize as the Worker uses it (src/vectors/): bge-m3 vectors, cosine, filtered on these metadata fields. */
export const VECTOR_INDEX = {
  dimensions: 1024,
  metric: 'cosine',
  metadata: [
    { property: 'project', type: 'string' },
    { property: 'type', type: 'string' },
  ],
};

const HEADER = /^\s*(\[\[?)([\w.]+)\]\]?\s*(?:#.*)?$/;
const PAIR = /^\s*([\w-]+)\s*=\s*"([^"]*)"\s*(?:#.*)?$/;

/**
 * `{name, d1: [{binding, database_name, database_id, migrations_dir}], vectorize: [{binding, index_name}],
 * r2: [{binding, bucket_name}], vars: {…}}`.
 */
export function readWranglerToml(text) {
  const out = { name: null, d1: [], vectorize: [], r2: [], vars: {} };
  let table = null;
  let block = null;
  for (const line of text.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      table = h[2];
      block = null;
      if (h[1] === '[[') {
        const list =
          table === 'd1_databases'
            ? out.d1
            : table === 'vectorize'
              ? out.vectorize
              : table === 'r2_buckets'
                ? out.r2
                : null;
        if (list) list.push((block = {}));
      }
      continue;
    }
    const p = PAIR.exec(line);
    if (!p) continue;
    if (table === null && p[1] === 'name') out.name = p[2];
    else if (block) block[p[1]] = p[2];
    else if (table === 'vars') out.vars[p[1]] = p[2];
  }
  return out;
}

/** The text with `database_id` of the D1 block whose binding is `binding` set to `id`; everything else as it was. */
export function withDatabaseId(text, binding, id) {
  const lines = text.split('\n');
  let inD1 = false;
  let matched = false;
  for (let i = 0; i < lines.length; i++) {
    const h = HEADER.exec(lines[i]);
    if (h) {
      inD1 = h[1] === '[[' && h[2] === 'd1_databases';
      matched = false;
      continue;
    }
    const p = PAIR.exec(lines[i]);
    if (!inD1 || !p) continue;
    if (p[1] === 'binding') matched = p[2] === binding;
    // The binding comes first in each of our blocks; an id line before it is checked once the block is known.
    if (p[1] === 'database_id' && matched) {
      lines[i] = lines[i].replace(/"[^"]*"/, `"${id}"`);
      return lines.join('\n');
    }
  }
  throw new Error(`wrangler.toml has no database_id line after binding = "${binding}"`);
}
