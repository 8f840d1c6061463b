// Issue 14, rows 5 and 13: the audit filter cannot make SQL fail, and anomalies cannot flood the audit log.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh } from '../support/http';
import { addTeammate, errorCode, json, newOwner } from '../teams/support';

type Entry = { action: string; target: string | null; detail: Record<string, unknown> };
const audit = async (token: string, action?: string) =>
  (
    await json<{ entries: Entry[] }>(
      await call(`/api/admin/audit${action ? `?action=${encodeURIComponent(action)}` : ''}`, { token }),
    )
  ).entries;

describe('audit filter (row 5)', () => {
  it('refuses an action filter of 100 emoji, or with LIKE wildcards, with 400 invalid_query instead of a 500', async () => {
    const owner = await newOwner();
    for (const action of ['😀'.repeat(100), '%', 'token%', '_'.repeat(50) + '%'.repeat(50)]) {
      const res = await call(`/api/admin/audit?action=${encodeURIComponent(action)}`, { token: owner.token });
      expect(res.status, action).toBe(400);
      expect(await errorCode(res)).toBe('invalid_query');
    }
  });

  it('still finds an action by its exact name or by its dotted prefix, and no other', async () => {
    const owner = await newOwner();
    await addTeammate(owner, fresh('bob'));
    expect((await audit(owner.token, 'user')).map((e) => e.action)).toContain('user.add');
    expect((await audit(owner.token, 'user.add')).every((e) => e.action === 'user.add')).toBe(true);
    expect(await audit(owner.token, 'use')).toEqual([]);
  });
});

describe('audit anomalies are bounded (row 13)', () => {
  it('writes one token.new_device row with a count for 50 different x-cairn-device values, listing at most 10', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'), { device: 'laptop' });
    for (let i = 0; i < 50; i++) {
      const res = await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': `box-${i}` } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const rows = await audit(owner.token, 'token.new_device');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.detail).toMatchObject({ device: 'box-0', enrolled_device: 'laptop', count: 50 });
    expect((rows[0]!.detail.devices as string[]).length).toBe(10);
    // A name already recorded is not counted again.
    await (await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': 'box-3' } })).arrayBuffer();
    expect((await audit(owner.token, 'token.new_device'))[0]!.detail.count).toBe(50);
  });

  it('writes one token.revoked_used row with a count for a revoked token retried 20 times', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'));
    await env.DB.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ?').bind(Date.now(), bob.token_id).run();
    for (let i = 0; i < 20; i++) expect((await call('/api/projects', { token: bob.token })).status).toBe(401);
    const rows = await audit(owner.token, 'token.revoked_used');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.detail).toMatchObject({ count: 20 });
  });

  it('opens a new row once the hour has passed', async () => {
    const owner = await newOwner();
    const bob = await addTeammate(owner, fresh('bob'), { device: 'laptop' });
    await (await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': 'first' } })).arrayBuffer();
    await env.DB.prepare(
      "UPDATE audit_log SET created_at = created_at - 3700000 WHERE action = 'token.new_device' AND target = ?",
    )
      .bind(`token:${bob.token_id}`)
      .run();
    await (await call('/api/projects', { token: bob.token, headers: { 'x-cairn-device': 'second' } })).arrayBuffer();
    const rows = await audit(owner.token, 'token.new_device');
    expect(rows.map((r) => r.detail.device)).toEqual(['second', 'first']);
  });
});
