// Issue 14, row 4 from the client's side: a spooled event the server can never take (nested past the depth
// limit) makes the server refuse the whole batch with 400; the client then sends the events one at a time,
// so the good ones land and the bad one goes to the dead-letter log instead of blocking the queue forever.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Spool } from '../../src/spool/spool';
import { run } from '../../src/run';
import { fakeServer, machine, memIo } from '../support';

const refuse = (res: import('node:http').ServerResponse) => {
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ error: { code: 'json_too_deep', message: 'The JSON body is nested deeper than 64 levels.' } }),
  );
  return true;
};

describe('a batch refused as a whole for one deep event', () => {
  it('is replayed one event at a time: the good events are delivered and the deep one is dropped to dead letters', async () => {
    const server = await fakeServer();
    server.handler = (req, res) => {
      const deep = req.body.includes('[[[[[[[[');
      if (req.path === '/api/events/batch' && deep) return refuse(res);
      if (req.path.startsWith('/api/sessions/') && deep) return refuse(res);
      return false;
    };
    try {
      const { home, env } = machine(server.url);
      const dir = join(home, '.local', 'state', 'cairn');
      const spool = new Spool(dir, { maxEvents: 100, maxBytes: 1e7 });
      const base = { session_id: 's', project: 'p', cwd: '/', occurred_at: 0, tool_name: 'Bash' };
      spool.append({ kind: 'observation', body: { ...base, event_id: 'good-1', tool_input: { command: 'ls' } } });
      spool.append({
        kind: 'observation',
        body: { ...base, event_id: 'deep', tool_input: JSON.parse(`${'['.repeat(100)}${']'.repeat(100)}`) },
      });
      spool.append({ kind: 'observation', body: { ...base, event_id: 'good-2', tool_input: { command: 'pwd' } } });
      const io = memIo({ env });
      expect(await run(['flush'], io)).toBe(0);
      expect([...server.stored.keys()].sort()).toEqual(['good-1', 'good-2']);
      expect(readFileSync(join(dir, 'dead.jsonl'), 'utf8')).toContain('"event_id":"deep"');
      expect(spool.stats().pendingEvents).toBe(0);
    } finally {
      await server.close();
    }
  });
});
