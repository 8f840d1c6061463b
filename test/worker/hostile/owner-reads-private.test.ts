// Issue 14, row 16, decided as "allowed, and said out loud": a token an owner mints for a teammate acts as
// that teammate (private projects included); the answer and the audit log say so every time.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh } from '../support/http';
import { initEvent, send } from '../pipeline/support';
import { addTeammate, json, newOwner } from '../teams/support';

describe('a token minted for a teammate', () => {
  it('says in its answer and in the audit log that it acts as the teammate and reads their private projects', async () => {
    const owner = await newOwner();
    const mia = await addTeammate(owner, fresh('mia'));
    const key = `github.com/${fresh('acme')}/diary`;
    await send(mia.token, 'init', initEvent(fresh('s'), 'private thoughts', { project: key }));
    await env.DB.prepare("UPDATE projects SET visibility = 'private' WHERE key = ?").bind(key).run();

    const minted = await json<{ token: string; acts_as?: string; reads_private?: boolean; notice?: string }>(
      await call('/api/admin/devices', { token: owner.token, json: { user: mia.user, name: 'spare-laptop' } }),
      201,
    );
    expect(minted).toMatchObject({ acts_as: mia.user, reads_private: true });
    expect(minted.notice).toContain(`reading ${mia.user}'s private projects`);
    // The documented consequence: the token reads mia's private project.
    const projects = await json<{ projects: { key: string }[] }>(await call('/api/projects', { token: minted.token }));
    expect(projects.projects.map((p) => p.key)).toContain(key);

    const audit = await json<{ entries: { action: string; actor: string; detail: Record<string, unknown> }[] }>(
      await call('/api/admin/audit?action=device.enroll', { token: owner.token }),
    );
    const row = audit.entries.find((e) => e.detail.device === 'spare-laptop');
    expect(row).toMatchObject({
      actor: owner.user,
      detail: { user: mia.user, minted_for_other: true, reads_private: true },
    });

    const rotated = await json<{ acts_as?: string; reads_private?: boolean }>(
      await call(`/api/admin/tokens/${mia.token_id}/rotate`, { token: owner.token, method: 'POST' }),
      201,
    );
    expect(rotated).toMatchObject({ acts_as: mia.user, reads_private: true });
  });

  it('carries no such note when the caller mints a token for themselves', async () => {
    const owner = await newOwner();
    const own = await json<Record<string, unknown>>(
      await call('/api/admin/devices', { token: owner.token, json: { name: 'second-box' } }),
      201,
    );
    expect(own.acts_as).toBeUndefined();
    expect(own.reads_private).toBeUndefined();
  });
});
