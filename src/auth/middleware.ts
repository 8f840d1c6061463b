// Bearer-token authentication and scope checks for /api/* and /mcp.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env';
import { AppError } from '../lib/errors';
import { lookupToken } from './tokens';
import type { Scope } from './types';

const LAST_USED_GRANULARITY_MS = 60_000;

export function bearerToken(header: string | undefined): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) throw new AppError(401, 'missing_token', 'Send your token as "Authorization: Bearer <token>".', {
    'WWW-Authenticate': 'Bearer realm="cairn"',
  });
  return m[1]!;
}

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header('authorization'));
  const now = Date.now();
  const check = await lookupToken(c.env.DB, token, now);
  if (!check.ok) {
    const message =
      check.reason === 'expired' ? 'This token has expired.' : check.reason === 'revoked' ? 'This token has been revoked.' : 'This token is not valid.';
    throw new AppError(401, check.reason === 'unknown' ? 'invalid_token' : `token_${check.reason}`, message, {
      'WWW-Authenticate': 'Bearer realm="cairn", error="invalid_token"',
    });
  }
  c.set('auth', check.auth);
  // last_used_at is advisory; write it at most once a minute and off the request path.
  if (check.lastUsedAt === null || now - check.lastUsedAt > LAST_USED_GRANULARITY_MS) {
    const write = c.env.DB.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?').bind(now, check.auth.tokenId).run();
    try {
      c.executionCtx.waitUntil(write);
    } catch {
      await write;
    }
  }
  await next();
};

export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.get('auth').scopes.includes(scope)) {
      throw new AppError(403, 'insufficient_scope', `This token lacks the "${scope}" scope.`);
    }
    await next();
  };
}
