// Bearer-token authentication for /api/* and /mcp (scope checks: scope.ts).
import { touchTokenUse } from '../db/tokens';
import type { Context, MiddlewareHandler } from 'hono';
import { endTime, startTime } from 'hono/timing';
import { AppError } from '../lib/errors';
import { auditDeadTokenUse, auditNewDevice, DEVICE_HEADER } from './anomalies';
import { forgetAllTokens, noteTokenUsed } from './token-cache';
import { lookupToken } from './tokens';
import type { AppEnv } from './types';
import { directoryDb, teamDb } from '../db/shards';
import { errorText, log } from '../lib/log';

const LAST_USED_GRANULARITY_MS = 60_000;

/** Query parameters that would carry a credential in a URL (logged by proxies, kept in shell history). */
const URL_CREDENTIAL_PARAMS = ['token', 'access_token', 'api_key', 'apikey'];

export function bearerToken(header: string | undefined): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m)
    throw new AppError(401, 'missing_token', 'Send your token as "Authorization: Bearer <token>".', {
      'WWW-Authenticate': 'Bearer realm="cairn"',
    });
  return m[1]!;
}

/** Refuses credentials in the query string, whether or not a header is also present. */
export function rejectTokenInUrl(url: string): void {
  const params = new URL(url).searchParams;
  const found = URL_CREDENTIAL_PARAMS.find((p) => params.has(p));
  if (found) {
    throw new AppError(
      400,
      'token_in_url',
      `Tokens are accepted only in the Authorization header, never in the URL ("${found}=").`,
    );
  }
}

/** Runs a write after the response when the runtime allows, else inline. Failures are logged, not thrown. */
function background(c: Context<AppEnv>, work: Promise<unknown>): Promise<void> {
  const safe = work.then(
    () => undefined,
    (err: unknown) => log('error', 'background write failed', { message: errorText(err) }),
  );
  try {
    c.executionCtx.waitUntil(safe);
    return Promise.resolve();
  } catch {
    return safe;
  }
}

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  rejectTokenInUrl(c.req.url);
  const token = bearerToken(c.req.header('authorization'));
  const now = Date.now();
  startTime(c, 'auth', 'token check');
  const { hash, check } = await lookupToken(directoryDb(c.env), token, now);
  endTime(c, 'auth');
  if (!check.ok) {
    if (check.reason !== 'unknown') {
      await background(
        c,
        teamDb(c.env, check.teamId).then((d) =>
          auditDeadTokenUse(d, { ...check, reason: check.reason, path: c.req.path }, now),
        ),
      );
    }
    const message =
      check.reason === 'expired'
        ? 'This token has expired.'
        : check.reason === 'revoked'
          ? 'This token has been revoked.'
          : 'This token is not valid.';
    throw new AppError(401, check.reason === 'unknown' ? 'invalid_token' : `token_${check.reason}`, message, {
      'WWW-Authenticate': 'Bearer realm="cairn", error="invalid_token"',
    });
  }
  const { auth } = check;
  c.set('auth', auth);
  // last_used_at / last_seen_at are advisory; write them at most once a minute and off the request path.
  if (check.lastUsedAt === null || now - check.lastUsedAt > LAST_USED_GRANULARITY_MS) {
    await background(c, touchTokenUse(directoryDb(c.env), auth.tokenId, auth.deviceId, now));
    noteTokenUsed(hash, now);
  }
  const device = c.req.header(DEVICE_HEADER)?.trim().slice(0, 64);
  if (device && device !== auth.deviceName) {
    await background(
      c,
      teamDb(c.env, auth.teamId).then((d) =>
        auditNewDevice(
          d,
          { teamId: auth.teamId, tokenId: auth.tokenId, userId: auth.userId, enrolled: auth.deviceName, device },
          now,
        ),
      ),
    );
  }
  await next();
  // Admin writes can revoke tokens, remove members, change scopes or team settings: drop this isolate's
  // memoised verdicts so the change holds here at once (other isolates within TOKEN_CACHE_MS).
  if (c.req.method !== 'GET' && c.req.path.startsWith('/api/admin/')) forgetAllTokens();
};
