// The DDL drizzle-kit derives from src/db/schema.ts, served to the worker tests as a Node-side service binding
// (SCHEMA_DDL). Computed on the first request, not at config load: the diff costs seconds and only the schema
// test asks for it.
import type { IncomingMessage, ServerResponse } from 'node:http';

let ddl: Promise<string[]> | null = null;

async function derive(): Promise<string[]> {
  const { generateSQLiteDrizzleJson, generateSQLiteMigration } = await import('drizzle-kit/api');
  const schema = await import('../../src/db/schema');
  return generateSQLiteMigration(await generateSQLiteDrizzleJson({}), await generateSQLiteDrizzleJson(schema));
}

export function schemaDdlHandler(_req: IncomingMessage, res: ServerResponse): void {
  ddl ??= derive();
  ddl.then(
    (stmts) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(stmts));
    },
    (err: unknown) => {
      ddl = null;
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err instanceof Error ? err.stack : err));
    },
  );
}
