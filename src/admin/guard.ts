// Who may administer: a token with the `admin` scope held by a current owner or admin of the team.
import type { MiddlewareHandler } from 'hono';
import { assertScope } from '../auth/scope';
import type { AppEnv, Role } from '../auth/types';
import { AppError } from '../lib/errors';

export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const auth = c.get('auth');
  // hasAdminPower (db/visibility.ts) is the same rule; checked in two steps here for the two refusals' codes.
  assertScope(auth, ['admin']);
  if (auth.role !== 'owner' && auth.role !== 'admin') {
    throw new AppError(403, 'not_admin', 'Only team owners and admins can administer the team.');
  }
  await next();
};

/** Owners manage everyone; admins manage admins and members but never owners, and cannot make owners. */
export function assertCanManage(actor: Role, target: Role, newRole?: Role): void {
  if (actor === 'owner') return;
  if (target === 'owner' || newRole === 'owner') {
    throw new AppError(403, 'owner_only', 'Only an owner can change owners or make someone an owner.');
  }
}
