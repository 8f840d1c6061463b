// Issue 14, row 3 for ingest: each event of /api/events/batch counts against the token's ingest limit.
import { describe, expect, it } from 'vitest';
import { call, fresh } from '../support/http';
import { toolEvent } from '../pipeline/support';
import { addTeammate, json, newOwner } from '../teams/support';

describe('events of a batch are counted one by one', () => {
  it('accepts 5 of 8 events under an ingest limit of 5 per minute and answers the other 3 rate_limited', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { rate_limit_ingest_per_min: 5 },
      }),
    );
    const bob = await addTeammate(owner, fresh('bob'));
    const sid = fresh('s');
    const events = Array.from({ length: 8 }, (_, i) => ({ kind: 'observation', ...toolEvent(sid, `cmd ${i}`) }));
    const res = await call('/api/events/batch', { token: bob.token, json: { events } });
    const { results } = await json<{ results: Array<{ accepted?: boolean; error?: { code: string } }> }>(res);
    expect(results.slice(0, 5).every((r) => r.accepted === true)).toBe(true);
    expect(results.slice(5).map((r) => r.error?.code)).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    // The window is spent: the next request is refused as a whole.
    const next = await call('/api/events/batch', { token: bob.token, json: { events: events.slice(5) } });
    expect(next.status).toBe(429);
  });
});
