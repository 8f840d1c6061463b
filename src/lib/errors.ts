// One error type for everything the API refuses, and the single funnel that turns errors into responses.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { errorText, log } from './log';

export class AppError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'resource') => new AppError(404, 'not_found', `No such ${what}.`);

export function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/** app.onError: AppErrors keep their status and code; anything else is logged and becomes a generic 500. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof AppError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json(errorBody(err.code, err.message), err.status);
  }
  // Hono's own HTTPException (e.g. body limit) carries a status we can trust.
  const status = (err as { status?: number }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return c.json(errorBody('bad_request', 'The request could not be processed.'), status as ContentfulStatusCode);
  }
  log('error', 'unhandled error', {
    route: c.req.routePath,
    message: errorText(err),
    stack: err.stack?.split('\n').slice(1, 6).join(' | '),
  });
  return c.json(errorBody('internal_error', 'Something went wrong on our side.'), 500);
}
