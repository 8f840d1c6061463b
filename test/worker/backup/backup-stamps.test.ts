// Backups are named and pruned by the server's time. A backup's stamp (its folder's name) is the time the server
// queued it, never one a caller sends; pruning keeps the newest BACKUP_KEEP by the time the server recorded in each
// manifest, not by name. Before, an admin could start backups stamped in the future: their names sorted past every
// real backup, so each night's backup was the one pruned and the team kept none it could use.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { backupJob } from '../../../src/backup/backup-job';
import { BACKUP_FORMAT, manifestKey, partKey, readManifest, stampOf, type Manifest } from '../../../src/backup/store';
import { startJob } from '../../../src/jobs/start';
import { configOf } from '../../../src/config';
import type { WireJob } from '../../../src/shared/jobs';
import { ADMIN_SECRET, call } from '../support/http';
import { runJob } from '../support/jobs';
import { seedWorld, type SeedWorld } from '../support/seed';

const DAY = 86_400_000;
const bucket = () => env.BACKUPS!;

/** A complete backup as the job leaves one (a part and its manifest), started by the server at `startedAt`. */
async function putBackup(team: string, stamp: string, startedAt: number): Promise<string> {
  const name = `${team}/${stamp}`;
  await bucket().put(partKey(name, 1), '{"kind":"user","handle":"x","role":"owner","created_at":0}\n');
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    format_version: 1,
    team,
    name,
    started_at: startedAt,
    finished_at: startedAt + 1_000,
    parts: 1,
    bytes: 60,
    records: { user: 1 },
  };
  await bucket().put(manifestKey(name), JSON.stringify(manifest));
  return name;
}

async function backupNow(w: SeedWorld): Promise<WireJob> {
  const res = await call('/api/admin/jobs', { token: w.id.token, json: { kind: 'backup' } });
  expect(res.status).toBe(202);
  return (await runJob(w.ids.teamId, ((await res.json()) as { job: WireJob }).job.id)) as WireJob;
}

const listed = async (team: string) =>
  (
    (await (await call(`/api/admin/teams/${team}/backups`, { token: ADMIN_SECRET })).json()) as {
      backups: { name: string; complete: boolean }[];
    }
  ).backups.map((b) => b.name);

const objects = async (name: string) => (await bucket().list({ prefix: `backups/${name}/` })).objects.length;

describe('backup stamps and pruning', { timeout: 60_000 }, () => {
  it('refuses a stamp chosen by the caller and names the backup by the time the server queued it', async () => {
    const w = await seedWorld();
    await w.add({ title: 'A note to back up' });
    const future = await call('/api/admin/jobs', {
      token: w.id.token,
      json: { kind: 'backup', params: { stamp: '2099-01-01T00-00-00Z' } },
    });
    expect(future.status).toBe(400);
    expect(((await future.json()) as { error: { code: string } }).error.code).toBe('invalid_job_params');
    expect(await listed(w.id.team)).toEqual([]);

    const before = stampOf(Date.now());
    const done = await backupNow(w);
    const after = stampOf(Date.now());
    expect(done.status).toBe('done');
    const name = (done.result as { backup: string }).backup;
    const stamp = name.slice(w.id.team.length + 1);
    expect(stamp >= before && stamp <= after).toBe(true);
  });

  it('keeps the newest BACKUP_KEEP by server time: future-stamped backups no longer push out the real ones', async () => {
    const w = await seedWorld();
    await w.add({ title: 'A note to back up' });
    const keep = configOf(env).backups.keep;
    const now = Date.now();
    // Backups an earlier version let an admin stamp in 2099, made over the last `keep` days (their manifests hold
    // the server's time), and two real ones from before them.
    const real = [
      await putBackup(w.id.team, stampOf(now - (keep + 2) * DAY), now - (keep + 2) * DAY),
      await putBackup(w.id.team, stampOf(now - (keep + 1) * DAY), now - (keep + 1) * DAY),
    ];
    const future: string[] = [];
    for (let i = 0; i < keep; i++)
      future.push(
        await putBackup(w.id.team, `2099-01-${String(i + 1).padStart(2, '0')}T00-00-00Z`, now - (keep - i) * DAY),
      );

    const done = await backupNow(w);
    const tonight = (done.result as { backup: string; pruned: string[] }).backup;
    // Tonight's backup is kept (before: it sorted below the 2099 names and was the first one pruned).
    expect(await objects(tonight)).toBeGreaterThan(0);
    expect((done.result as { pruned: string[] }).pruned.sort()).toEqual([...real, future[0]!].sort());
    for (const name of [...real, future[0]!]) expect(await objects(name)).toBe(0);
    // Listed newest first by server time: tonight's, then the others from the most recent down.
    expect(await listed(w.id.team)).toEqual([tonight, ...future.slice(1).reverse()]);
  });

  it('prunes an unfinished backup started before the newest complete one, and one stamped in the future', async () => {
    const w = await seedWorld();
    await w.add({ title: 'A note to back up' });
    const now = Date.now();
    const stale = `${w.id.team}/${stampOf(now - DAY)}`;
    await bucket().put(partKey(stale, 1), '{}\n');
    const ahead = `${w.id.team}/2099-06-01T00-00-00Z`;
    await bucket().put(partKey(ahead, 1), '{}\n');
    const done = await backupNow(w);
    expect((done.result as { pruned: string[] }).pruned.sort()).toEqual([stale, ahead].sort());
    expect(await objects(stale)).toBe(0);
    expect(await objects(ahead)).toBe(0);
  });

  it("fails a second backup queued in the same second instead of writing over the first one's folder", async () => {
    const w = await seedWorld();
    await w.add({ title: 'A note to back up' });
    // Both start within one second of the clock (stamps have one-second resolution).
    const at = Math.floor(Date.now() / 1000) * 1000;
    const first = await runJob(w.ids.teamId, (await startJob(env, backupJob, w.ids.teamId, {}, null, { now: at })).id);
    expect(first.status).toBe('done');
    const name = (first.result as { backup: string }).backup;
    const kept = await readManifest(bucket(), name);
    const second = await runJob(
      w.ids.teamId,
      (await startJob(env, backupJob, w.ids.teamId, {}, null, { now: at + 10 })).id,
    );
    expect(second).toMatchObject({ status: 'failed', error: { code: 'backup_exists' } });
    expect(await readManifest(bucket(), name)).toEqual(kept);
  });
});
