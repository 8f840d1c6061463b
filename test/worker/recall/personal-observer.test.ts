// The observer may propose personal memory (issue 36): an observation it marks `<scope>personal</scope>` (the
// developer said something about how they work) is stored in the author's personal project, never the session's,
// and reaches the author's next session in any project and nobody else's. Hook events go through the real routes and
// SessionDO; the observer is the real Anthropic SDK against the scripted fake on 127.0.0.1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { secretWord } from '../support/storage-scan';
import { script, send, settled, waitFor } from '../pipeline/support';
import { addTeammate } from '../teams/support';

const ROOT = '/home/dev/widgets';

const event = (sid: string, project: string, extra: Record<string, unknown>) => ({
  session_id: sid,
  project,
  cwd: ROOT,
  project_root: ROOT,
  occurred_at: Date.now(),
  event_id: fresh('ev'),
  tool_use_id: fresh('tu'),
  ...extra,
});

const context = (token: string, project: string) =>
  call(`/api/context?project=${encodeURIComponent(project)}`, { token }).then((r) => r.text());

describe('the observer proposing personal memory', () => {
  it("stores what the developer said about themselves in their personal memory, not the project's", async () => {
    const me = await newIdentity({ role: 'owner' });
    const mate = await addTeammate(me, fresh('mate'));
    const project = `github.com/acme/${fresh('repo')}`;
    const word = secretWord();
    const scenario = fresh('personal');
    await script(scenario, [
      {
        text: [
          '<observation><type>discovery</type><title>Lockfile is pnpm-lock.yaml</title>',
          '<narrative>The repository installs with pnpm.</narrative><files_read><file>package.json</file></files_read></observation>',
          `<observation><type>discovery</type><title>Prefers pnpm over npm</title><scope>personal</scope>`,
          `<narrative>The developer always uses pnpm, never npm ${word}.</narrative><files_read><file>package.json</file></files_read></observation>`,
        ].join('\n'),
      },
    ]);
    const sid = fresh('s');
    await send(me.token, 'init', event(sid, project, { prompt: 'I always use pnpm, never npm. Install the deps.' }));
    await send(
      me.token,
      'observations',
      event(sid, project, {
        tool_name: 'Bash',
        tool_input: { command: `pnpm install # SCENARIO:${scenario}` },
        tool_response: { stdout: 'done', exit_code: 0 },
      }),
    );
    await waitFor(me.token, sid, (s) => settled(s) && s.observations_stored >= 2);

    const rows = await env.DB.prepare(
      `SELECT o.title, p.key, p.visibility, o.files_read, s.session_key FROM observations o
         JOIN projects p ON p.id = o.project_id JOIN sessions s ON s.id = o.session_id
        WHERE o.title IN ('Lockfile is pnpm-lock.yaml', 'Prefers pnpm over npm') AND p.team_id = (SELECT team_id FROM projects WHERE key = ?)`,
    )
      .bind(project)
      .all<{ title: string; key: string; visibility: string; files_read: string; session_key: string }>();
    const byTitle = new Map(rows.results.map((r) => [r.title, r]));
    expect(byTitle.get('Lockfile is pnpm-lock.yaml')?.key).toBe(project);
    expect(byTitle.get('Prefers pnpm over npm')).toMatchObject({
      key: `#personal/${me.user}`,
      visibility: 'private',
      files_read: '[]',
    });
    expect(byTitle.get('Prefers pnpm over npm')?.session_key).toMatch(/^manual:/);

    // The author's next session, in another project, starts with it; the teammate's never does.
    const elsewhere = `github.com/acme/${fresh('other')}`;
    expect(await context(me.token, elsewhere)).toContain(word);
    expect(await context(mate.token, project)).not.toContain(word);
    expect(await context(mate.token, project)).toContain('Lockfile is pnpm-lock.yaml');
  });
});
