// Edge validation: read a bounded JSON body and check it against a zod schema, with stable error codes.
import type { Context } from 'hono';
import { z } from 'zod';
import { AppError } from './errors';
import { assertJsonShape } from './json-limits';

export const MAX_BODY_BYTES = 1_000_000;

function describe(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return 'The request body is not valid.';
  const path = first.path.length ? first.path.join('.') : 'body';
  return `${path}: ${first.message}`;
}

export async function readJson<T extends z.ZodType>(c: Context, schema: T, maxBytes = MAX_BODY_BYTES): Promise<z.infer<T>> {
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
