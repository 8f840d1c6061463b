// Scopes: the one check every route guard and tool uses, so a refusal always reads the same.
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../lib/errors';
import type { AppEnv, AuthContext, Scope } from './types';

/**
 * The one scope check: passes when the token holds any of `anyOf`. `purpose` finishes the refusal message
 * ("… needed to change memory") where the route alone does not explain it.
 */
export function assertScope(auth: Pick<AuthContext, 'scopes'>, anyOf: readonly Scope[], purpose?: string): void {
  if (anyOf.some((s) => auth.scopes.includes(s))) return;
  const named = anyOf.map((s) => `"${s}"`).join(' or ');
  throw new AppError(403, 'insufficient_scope', `This token lacks the ${named} scope${purpose ? ` ${purpose}` : ''}.`);
}

/** Route guard form of assertScope, declared where a feature is mounted (src/app.ts). */
export function requireScope(...anyOf: Scope[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    assertScope(c.get('auth'), anyOf);
    await next();
  };
}

/** For a prefix whose reads and writes differ: GET and HEAD need any of `read`, other methods any of `write`. */
export function scopeByMethod(need: { read: Scope[]; write: Scope[] }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    assertScope(c.get('auth'), c.req.method === 'GET' || c.req.method === 'HEAD' ? need.read : need.write);
    await next();
  };
}
