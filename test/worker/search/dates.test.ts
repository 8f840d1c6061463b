// Time questions: days named in a query lift what was stored around them, instead of matching their digits.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types';
import { dayWindow, liftDated, namedDays } from '../../../src/search/dates';
import { searchObservations } from '../../../src/search/search';
import { seedWorld, type SeedWorld } from '../support/seed';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
const DAY = 86_400_000;

describe('namedDays', () => {
  it('reads days written with dots (day first), ISO dates, and month names either side of the day', () => {
    expect(namedDays('What class did Kevin have on 21.01.2024?').days).toEqual([day('2024-01-21')]);
    expect(namedDays('deploys on 2024-01-05T10:00:00Z').days).toEqual([day('2024-01-05')]);
    expect(namedDays('pasta on 29 Dec 2023').days).toEqual([day('2023-12-29')]);
    expect(namedDays('the 10th of February 2024').days).toEqual([day('2024-02-10')]);
    expect(namedDays('on January 6, 2024 and Sept 3 2023').days).toEqual([day('2024-01-06'), day('2023-09-03')]);
  });

  it('cuts digit-only dates out of the words but keeps a written month, which stored text may contain', () => {
    expect(namedDays('What class did Kevin have on 21.01.2024?').rest).toBe('What class did Kevin have on  ?');
    expect(namedDays('trip on 10th of February 2024').rest).toBe('trip on 10th of February 2024');
  });

  it('reads a slashed date both ways unless one part is above 12', () => {
    expect(namedDays('1/2/2024').days).toEqual([day('2024-01-02'), day('2024-02-01')]);
    expect(namedDays('13/2/2024').days).toEqual([day('2024-02-13')]);
    expect(namedDays('2/13/2024').days).toEqual([day('2024-02-13')]);
  });

  it('ignores days that do not exist, years alone, version numbers and months without a year', () => {
    for (const q of ['31.02.2024', 'in 2024', 'bump to 1.2.3', 'v2.10.2024-beta', 'in May', '99.99.9999']) {
      expect(namedDays(q)).toEqual({ rest: q, days: [] });
    }
  });

  it('reads days relative to now only when no date is written out, and takes their words out', () => {
    const now = day('2024-03-08') + 10 * 3_600_000; // a Friday
    expect(namedDays('deploy yesterday', now)).toEqual({ rest: 'deploy  ', days: [day('2024-03-07')] });
    expect(namedDays('3 days ago', now).days).toEqual([day('2024-03-05')]);
    expect(namedDays('on Friday', now).days).toEqual([day('2024-03-01')]);
    expect(namedDays('last Thursday', now).days).toEqual([day('2024-03-07')]);
    expect(namedDays('last week', now).days).toEqual([day('2024-03-01'), day('2024-03-07')]);
    expect(namedDays('on Friday before 10.01.2024', now).days).toEqual([day('2024-01-10')]);
    expect(namedDays('deploy yesterday').days).toEqual([]);
    expect(namedDays('the last weekend', now).days).toEqual([]);
  });

  it('reads at most four days and only the first 1000 characters', () => {
    const many = Array.from({ length: 9 }, (_, i) => `0${i + 1}.01.2024`).join(' ');
    expect(namedDays(many).days).toHaveLength(4);
    expect(namedDays(`${'x '.repeat(600)} 21.01.2024`).days).toEqual([]);
  });
});

describe('dayWindow and liftDated', () => {
  it('spans a day either side of the named days, and nothing when they spread over more than a month', () => {
    expect(dayWindow([])).toBeNull();
    expect(dayWindow([day('2024-01-21')])).toEqual({ since: day('2024-01-20'), until: day('2024-01-23') - 1 });
    expect(dayWindow([day('2024-01-21'), day('2024-01-19')])).toEqual({
      since: day('2024-01-18'),
      until: day('2024-01-23') - 1,
    });
    expect(dayWindow([day('2024-01-01'), day('2024-03-01')])).toBeNull();
  });

  it('raises rows both lists rank well, adds rows only the window found, and keeps what the list knew', () => {
    const list = [
      { id: 1, exact: true },
      { id: 2, exact: false },
      { id: 3, exact: false },
    ];
    const lifted = liftDated(list, [3, 9], (id) => ({ id, exact: false }));
    expect(lifted.map((x) => x.id)).toEqual([3, 1, 2, 9]);
    expect(lifted.find((x) => x.id === 1)!.exact).toBe(true);
    expect(liftDated(list, [], (id) => ({ id, exact: false }))).toEqual(list);
  });
});

describe('search with a day in the question', () => {
  const authOf = (w: SeedWorld): AuthContext => ({
    tokenId: 0,
    teamId: w.ids.teamId,
    teamSlug: w.id.team,
    userId: w.ids.userId,
    handle: w.id.user,
    role: 'owner',
    deviceId: null,
    deviceName: null,
    scopes: ['read'],
  });

  it('ranks what was stored around the named day above the same words on other days', async () => {
    const w = await seedWorld();
    const onDay = day('2024-01-21') + 15 * 3_600_000;
    const others: number[] = [];
    // Better word matches than the wanted row, on other days: without the date they would all rank above it.
    for (let i = 1; i <= 6; i++)
      others.push(await w.add({ title: `Kevin piano class: piano class ${i}`, createdAt: onDay - i * 5 * DAY }));
    const wanted = await w.add({
      title: 'Kevin went along to his first piano class after a long day at the office',
      createdAt: onDay,
    });
    const res = await searchObservations(env, authOf(w), {
      q: 'What piano class did Kevin have on 21.01.2024?',
      project: [w.key],
    });
    expect(res.results[0]!.id).toBe(wanted);
    expect(res.results.map((r) => r.id)).toEqual(expect.arrayContaining(others));
  });

  it('lifts a session summary from the named day too', async () => {
    const w = await seedWorld();
    const onDay = day('2024-03-05') + 9 * 3_600_000;
    await w.summary({ request: 'Walrus exporter: walrus exporter tidy', createdAt: onDay - 20 * DAY });
    const wanted = await w.summary({
      request: 'The walrus exporter drops spans when the batch queue fills up',
      createdAt: onDay,
    });
    await w.summary({ request: 'Walrus exporter: walrus exporter renamed', createdAt: onDay + 20 * DAY });
    const res = await searchObservations(env, authOf(w), {
      q: 'walrus exporter on 2024-03-05',
      project: [w.key],
      kind: 'summaries',
    });
    expect(res.results[0]!.id).toBe(wanted);
  });

  it("answers a query that is nothing but a day, or filler around one, with that day's records newest first", async () => {
    const w = await seedWorld();
    const onDay = day('2024-01-21') + 12 * 3_600_000;
    const early = await w.add({ title: 'Morning stand-up notes', createdAt: onDay - 3 * 3_600_000 });
    const late = await w.add({ title: 'Evening deploy of the billing service', createdAt: onDay + 3 * 3_600_000 });
    await w.add({ title: 'A week later', createdAt: onDay + 7 * DAY });
    for (const q of ['21.01.2024', 'what did we do on 2024-01-21?']) {
      expect((await searchObservations(env, authOf(w), { q, project: [w.key] })).results.map((r) => r.id)).toEqual([
        late,
        early,
      ]);
    }
  });

  it('reads yesterday, days ago, last week and weekdays from the clock it is given', async () => {
    const w = await seedWorld();
    const now = day('2024-03-08') + 10 * 3_600_000; // a Friday
    const yesterday = await w.add({ title: 'Heron cache flushed', createdAt: day('2024-03-07') + 3_600_000 });
    const monday = await w.add({ title: 'Heron cache resized', createdAt: day('2024-03-04') + 3_600_000 });
    const older = await w.add({ title: 'Heron cache: heron cache created', createdAt: day('2024-01-04') });
    const ask = async (q: string) =>
      (await searchObservations(env, authOf(w), { q, project: [w.key] }, { now })).results.map((r) => r.id);
    expect((await ask('heron cache yesterday'))[0]).toBe(yesterday);
    expect((await ask('heron cache 4 days ago'))[0]).toBe(monday);
    expect((await ask('what changed in the heron cache on Monday'))[0]).toBe(monday);
    expect(await ask('what did we do yesterday')).toEqual([yesterday]);
    expect(await ask('last week')).toEqual([yesterday, monday]);
    expect(await ask('heron cache')).toContain(older);
  });
});
