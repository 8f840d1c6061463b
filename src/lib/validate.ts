// Edge validation: read a bounded JSON body and check it against a zod schema, with stable error codes.
import { zValidator } from '@hono/zod-validator';
import type { Context, Env, MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { inertLine } from '#shared/inert';
import { AppError } from './errors';
import { assertJsonShape } from './json-limits';

export const MAX_BODY_BYTES = 1_000_000;

/**
 * A one-line string a client names something by (a project or session key, an id, a tool, a glob): made inert at
 * the edge (src/shared/inert.ts: control and bidi characters out, line ends as spaces), then trimmed and held to
 * `min`..`max` characters. Names of people, devices and teams are refused instead (lib/names.ts): stripping one
 * could turn it into someone else's.
 */
export const lineField = (max: number, min = 1) =>
  z.string().transform(inertLine).pipe(z.string().trim().min(min).max(max));

function describe(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const first = error.issues[0];
  if (!first) return 'The request body is not valid.';
  const path = first.path.length ? first.path.join('.') : 'body';
  return `${path}: ${first.message}`;
}

export async function readJson<T extends z.ZodType>(
  c: Context,
  schema: T,
  maxBytes = MAX_BODY_BYTES,
): Promise<z.infer<T>> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const buf = await c.req.arrayBuffer();
  if (buf.byteLength > maxBytes) throw tooLarge(maxBytes);
  const text = new TextDecoder().decode(buf);
  assertJsonShape(text);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new AppError(400, 'malformed_json', 'The request body is not valid JSON.');
  }
  return parseWith(schema, raw, 'invalid_body');
}

export function parseWith<T extends z.ZodType>(schema: T, raw: unknown, code = 'invalid_query'): z.infer<T> {
  const result = schema.safeParse(raw);
  if (!result.success) throw new AppError(400, code, describe(result.error));
  return result.data;
}

const tooLarge = (max: number) => new AppError(413, 'payload_too_large', `The request body exceeds ${max} bytes.`);

/**
 * Route validators. Hono's validator middleware (through @hono/zod-validator for queries) puts the parsed value
 * behind `c.req.valid(target)`; failures go through AppError, so the 400s keep their stable codes.
 */
type Validated<Target extends 'json' | 'query', T extends z.ZodType> = {
  in: { [K in Target]: z.input<T> };
  out: { [K in Target]: z.output<T> };
};

export interface QueryShape {
  /** Repeatable keys (such as `project`): always arrays, empty when absent. */
  lists?: readonly string[];
  /** `key=` counts as absent, for routes whose clients send empty values for unset filters. */
  blankIsAbsent?: boolean;
}

/** Query parameters: keys not in `lists` take their first value, as `c.req.query(key)` would. */
export function query<T extends z.ZodType>(
  schema: T,
  shape: QueryShape = {},
): MiddlewareHandler<Env, string, Validated<'query', T>> {
  const shaped = z.preprocess((value) => queryShape(value as Record<string, string | string[]>, shape), schema);
  return zValidator('query', shaped, (result) => {
    if (!result.success) throw new AppError(400, 'invalid_query', describe(result.error));
  }) as unknown as MiddlewareHandler<Env, string, Validated<'query', T>>;
}

function queryShape(
  value: Record<string, string | string[]>,
  { lists = [], blankIsAbsent = false }: QueryShape,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, raw] of Object.entries(value)) {
    if (lists.includes(k)) out[k] = [raw].flat();
    else if (!(blankIsAbsent && [raw].flat()[0] === '')) out[k] = [raw].flat()[0]!;
  }
  for (const k of lists) out[k] ??= [];
  return out;
}

/** A JSON body read with a byte bound (413 past it), then checked against the schema (400 `invalid_body`). */
export function jsonBody<T extends z.ZodType>(
  schema: T,
  maxBytes = MAX_BODY_BYTES,
): MiddlewareHandler<Env, string, Validated<'json', T>> {
  return async (c, next) => {
    c.req.addValidatedData('json', (await readJson(c, schema, maxBytes)) as object);
    await next();
  };
}
