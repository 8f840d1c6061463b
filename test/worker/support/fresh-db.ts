// A deployment's databases as a new (or an older) version would find them: every table, index and trigger of
// DB and DB_1 dropped, then the migrations applied again, all of them or the first `upTo` (an install from before
// the later ones). Storage is per test file, so this empties only the calling file's databases.
import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

export async function resetDatabases(upTo?: number): Promise<void> {
  const migrations = upTo === undefined ? env.TEST_MIGRATIONS : env.TEST_MIGRATIONS.slice(0, upTo);
  for (const d1 of [env.DB, env.DB_1]) {
    for (let round = 0; round < 10; round++) {
      const rows = await d1
        .prepare(
          "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
        )
        .all<{ name: string; sql: string }>();
      if (rows.results.length === 0) break;
      // Virtual tables first (their shadow tables go with them); a table still referenced waits for the next round.
      const ordered = [...rows.results].sort((a, b) => Number(/VIRTUAL/i.test(b.sql)) - Number(/VIRTUAL/i.test(a.sql)));
      for (const t of ordered)
        await d1
          .prepare(`DROP TABLE IF EXISTS "${t.name}"`)
          .run()
          .catch(() => undefined);
    }
    const left = await d1
      .prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
      .first<{ n: number }>();
    if (left?.n !== 0) throw new Error(`${left?.n} schema objects survived the reset`);
    await applyD1Migrations(d1, migrations);
  }
}
