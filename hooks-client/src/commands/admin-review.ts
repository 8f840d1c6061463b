// `cairn admin review`: what waits in the review queue (proposals while the team's consolidation is `review`, and
// how many records are flagged, superseded or held), and an admin's decision on a proposal. Titles are other
// people's words: each is shown as one line (the terminal filter takes out control characters as well).

/** A proposal as GET /api/admin/review answers it (src/proposals/service.ts `ProposalItem`). */
export interface ProposalBody {
  id: number;
  kind: 'merge' | 'supersede';
  record: { id: number; title: string | null };
  sources?: { id: number; title: string | null }[];
  by?: { id: number; title: string | null };
  reason: string | null;
  actor: string;
}

export interface ReviewBody {
  flagged?: unknown[];
  superseded?: unknown[];
  held?: unknown[];
  proposals?: ProposalBody[];
}

const line = (s: string | null, max = 70) => (s ?? '').replace(/\s+/g, ' ').trim().slice(0, max);

/** The queue as lines: one block a proposal (what accepting it would change), then the other queues' counts. */
export function renderReview(b: ReviewBody): string {
  const out: string[] = [];
  for (const p of b.proposals ?? []) {
    if (p.kind === 'merge') {
      const sources = (p.sources ?? []).map((s) => `#${s.id}`).join(', ');
      out.push(`proposal ${p.id} (${p.actor}): merge ${sources} into #${p.record.id} "${line(p.record.title)}"`);
      for (const s of p.sources ?? []) out.push(`  #${s.id} "${line(s.title)}" leaves search and the context index`);
    } else {
      out.push(
        `proposal ${p.id} (${p.actor}): #${p.record.id} "${line(p.record.title)}" superseded by #${p.by?.id} "${line(p.by?.title ?? null)}"`,
      );
    }
    if (p.reason) out.push(`  why: ${line(p.reason, 200)}`);
  }
  if (!out.length) out.push('no proposals wait for a decision');
  out.push(
    `flagged ${b.flagged?.length ?? 0} · superseded ${b.superseded?.length ?? 0} · held ${b.held?.length ?? 0} (the viewer's Review shows them)`,
  );
  out.push('decide: cairn admin review accept <proposal> | cairn admin review discard <proposal>');
  return `${out.join('\n')}\n`;
}

/** `accept 12` / `discard 12` → the decision and the proposal id; null when the words are not one. */
export function reviewDecision(args: readonly string[]): { decision: 'accept' | 'discard'; id: number } | null {
  const [decision, id] = args;
  if ((decision !== 'accept' && decision !== 'discard') || !/^\d{1,15}$/.test(id ?? '') || args.length !== 2)
    return null;
  return { decision, id: Number(id) };
}
