// Mounted at /api/admin/proposals, under the admin guard (src/app.ts): the waiting proposals and the decisions.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { jsonBody, parseWith } from '../lib/validate';
import { decideProposal, proposalsFor } from './service';

export const proposalRoutes = new Hono<AppEnv>();

export const DecisionBody = z.object({ decision: z.enum(['accept', 'discard']) }).strict();
const ProposalParam = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

proposalRoutes.get('/', async (c) => c.json({ proposals: await proposalsFor(c.env, c.get('auth')) }));

proposalRoutes.post('/:id', jsonBody(DecisionBody, 1_000), async (c) => {
  const id = parseWith(ProposalParam, c.req.param('id'), 'invalid_id');
  return c.json(await decideProposal(c.env, c.get('auth'), id, c.req.valid('json').decision, Date.now()));
});
