// npm run backfill -- --url https://cairn.example --token <admin token> [--limit 500]
// Re-embeds the team's observations that have no vector yet, one bounded batch per request, until none remain.
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { url: { type: 'string' }, token: { type: 'string' }, limit: { type: 'string', default: '500' } },
});
const url = values.url ?? process.env.CAIRN_URL;
const token = values.token ?? process.env.CAIRN_TOKEN;
if (!url || !token) {
  console.error('usage: npm run backfill -- --url <cairn url> --token <admin token> [--limit N]');
  process.exit(2);
}

let total = 0;
for (let attempt = 0; ; ) {
  const res = await fetch(`${url.replace(/\/$/, '')}/api/admin/backfill-vectors?limit=${encodeURIComponent(values.limit)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  const body = await res.json().catch(() => ({}));
  if (res.status === 429 || res.status === 503) {
    if (++attempt > 5) throw new Error(`giving up after repeated ${res.status}: ${JSON.stringify(body)}`);
    const wait = Number(res.headers.get('retry-after') ?? 0) * 1000 || 2000 * attempt;
    console.error(`server said ${res.status}; retrying in ${wait / 1000}s`);
    await new Promise((r) => setTimeout(r, wait));
    continue;
  }
  if (!res.ok) {
    console.error(`backfill failed: ${res.status} ${JSON.stringify(body)}`);
    process.exit(1);
  }
  attempt = 0;
  total += body.indexed;
  console.log(`indexed ${body.indexed} (${body.failed} failed), ${body.remaining} remaining [${body.index}]`);
  if (body.remaining === 0 || body.indexed === 0) break;
}
console.log(`done: ${total} observations embedded`);
