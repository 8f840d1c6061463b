// The admins' review queue in the detail pane: records flagged or superseded (confirm / restore / keep), records
// held back as instruction-like text (release: teammates see them from then on) and what consolidation merged
// (undo within its window), and proposals waiting for a decision (consolidation: review): accept applies them as
// versions, discard leaves nothing. Every text is set as text (dom.ts), never parsed.
import { inertText } from '#shared/inert';
import type { Api } from './api';
import { h, on } from './dom';
import type { Key } from './i18n';

type Translate = (key: Key, vars?: Record<string, string | number>) => string;

export interface QueueItem {
  id: number;
  title: string | null;
  project: string;
  author: string;
  state: 'flagged' | 'superseded';
  superseded_by: number | null;
  wrong: number;
  outdated: number;
  useful: number;
  fetched: number;
  last: { action: string; who: string | null; reason: string | null } | null;
}

/** A record held back from the rest of the team (GET /api/admin/review `held`). */
export interface HeldItem {
  kind: 'observation' | 'summary' | 'prompt';
  id: number;
  title: string | null;
  project: string;
  author: string;
  held: string[];
}

/** A merge still in place (GET /api/admin/merges). */
export interface MergeItem {
  id: number;
  title: string | null;
  sources: number[];
  undoable: boolean;
}

/** A change waiting for a decision (consolidation: review; GET /api/admin/review `proposals`). */
export interface ProposalItem {
  id: number;
  kind: 'merge' | 'supersede';
  record: { id: number; title: string | null };
  sources?: { id: number; title: string | null }[];
  by?: { id: number; title: string | null };
  reason: string | null;
  actor: string;
}

export interface ReviewQueue {
  flagged: QueueItem[];
  superseded: QueueItem[];
  held?: HeldItem[];
  proposals?: ProposalItem[];
}

export type Decision = 'confirm' | 'restore' | 'keep';

/** What the panel's buttons ask for; each answers the message to show. */
export interface ReviewActions {
  decide(id: number, d: Decision): Promise<string>;
  release(item: HeldItem): Promise<string>;
  undo(id: number): Promise<string>;
  proposal(item: ProposalItem, decision: 'accept' | 'discard'): Promise<string>;
}

const DECISION_KEY: Record<Decision, Key> = { confirm: 'reviewConfirm', restore: 'reviewRestore', keep: 'reviewKeep' };
/** How the CLI and search name a record of each kind. */
const label = (kind: HeldItem['kind'], id: number) =>
  `${kind === 'observation' ? '#' : kind === 'summary' ? 'S' : 'P'}${id}`;
/** The release body names summaries and prompts by their own lists (POST /api/admin/release). */
const RELEASE_FIELD = { observation: 'ids', summary: 'summaries', prompt: 'prompts' } as const;

/** The API calls behind the panel; `failed` turns a refusal into the message shown. */
export function reviewActions(api: Api, t: Translate, failed: (e: unknown) => string): ReviewActions {
  return {
    decide: (id, d) =>
      api
        .post(`/api/admin/review/${id}`, { decision: d })
        .then(() => t('reviewDone', { n: id, d: t(DECISION_KEY[d]) }), failed),
    release: (item) =>
      api
        .post<{ released: Record<string, number[]> }>('/api/admin/release', { [RELEASE_FIELD[item.kind]]: [item.id] })
        .then(
          (r) =>
            Object.values(r.released).some((ids) => ids.includes(item.id))
              ? t('reviewReleased', { n: label(item.kind, item.id) })
              : t('reviewNotHeld', { n: label(item.kind, item.id) }),
          failed,
        ),
    undo: (id) =>
      api
        .post<{ restored: number[] }>(`/api/admin/merges/${id}/undo`, {})
        .then((r) => t('reviewUndone', { n: id, k: r.restored.length }), failed),
    proposal: (item, decision) =>
      api.post<{ records: number[] }>(`/api/admin/proposals/${item.id}`, { decision }).then(
        (r) =>
          t(decision === 'accept' ? 'proposalAccepted' : 'proposalDiscarded', {
            ids: r.records.map((n) => `#${n}`).join(', '),
          }),
        failed,
      ),
  };
}

/** One card: its number, title, a line of facts, an optional reason, and its buttons (each removes the card when done). */
function card(
  attr: Record<string, string>,
  id: string,
  title: string | null,
  meta: string,
  why: string,
  buttons: [string, string, () => Promise<string>][],
  message: HTMLElement,
): HTMLElement {
  const li = h('li', { class: 'card', ...attr });
  const row = buttons.map(([name, text, act]) => {
    const b = h('button', { class: 'secondary', type: 'button', 'data-action': name, text });
    on(b, 'click', () => {
      void act().then((m) => {
        message.textContent = inertText(m);
        li.remove();
      });
    });
    return b;
  });
  li.append(
    h('div', { class: 'card-top' }, h('span', { class: 'card-id', text: id })),
    h('div', { class: 'card-title', text: title ?? '' }),
    h('div', { class: 'meta', text: meta }),
    why ? h('div', { class: 'card-sub', text: why }) : '',
    h('div', { class: 'actions' }, ...row),
  );
  return li;
}

export function reviewPanel(
  t: Translate,
  queue: ReviewQueue,
  merges: readonly MergeItem[],
  act: ReviewActions,
): HTMLElement {
  const message = h('p', { id: 'review-message', role: 'status' });
  const queued = (item: QueueItem): HTMLElement => {
    const why = item.last
      ? `${item.last.action}${item.last.who ? ` · @${item.last.who}` : ''}${item.last.reason ? `: ${item.last.reason}` : ''}`
      : '';
    const by =
      item.superseded_by != null && item.superseded_by !== item.id
        ? ` · ${t('supersededBy', { n: item.superseded_by })}`
        : '';
    const buttons = (['confirm', 'restore', 'keep'] as const).map((d): [string, string, () => Promise<string>] => [
      d,
      t(DECISION_KEY[d]),
      () => act.decide(item.id, d),
    ]);
    return card(
      { 'data-review': String(item.id) },
      `#${item.id}`,
      item.title,
      `${item.project} · @${item.author}${by}`,
      why,
      buttons,
      message,
    );
  };
  const held = (item: HeldItem): HTMLElement =>
    card(
      { 'data-held': `${item.kind}:${item.id}` },
      label(item.kind, item.id),
      item.title,
      `${item.project} · @${item.author}`,
      t('reviewHeldWhy', { kinds: item.held.join(', ') }),
      [['release', t('reviewRelease'), () => act.release(item)]],
      message,
    );
  const merged = (m: MergeItem): HTMLElement =>
    card(
      { 'data-merge': String(m.id) },
      `#${m.id}`,
      m.title,
      t('reviewStandsFor', { ids: m.sources.map((s) => `#${s}`).join(', ') }),
      '',
      m.undoable ? [['undo', t('reviewUndo'), () => act.undo(m.id)]] : [],
      message,
    );
  const proposed = (p: ProposalItem): HTMLElement => {
    const one = (r: { id: number; title: string | null }) => `#${r.id} ${r.title ?? ''}`.trim();
    const would =
      p.kind === 'merge'
        ? t('proposalMerge', { ids: (p.sources ?? []).map(one).join(' · '), into: `#${p.record.id}` })
        : t('proposalSupersede', { id: `#${p.record.id}`, by: p.by ? one(p.by) : '' });
    return card(
      { 'data-proposal': String(p.id) },
      `${p.kind} · ${p.actor}`,
      one(p.record),
      would,
      p.reason ?? '',
      [
        ['accept', t('proposalAccept'), () => act.proposal(p, 'accept')],
        ['discard', t('proposalDiscard'), () => act.proposal(p, 'discard')],
      ],
      message,
    );
  };
  const part = <T>(id: string, title: string, items: readonly T[], render: (x: T) => HTMLElement) =>
    items.length
      ? h(
          'section',
          { class: 'block', id },
          h('h3', { text: title }),
          h('ul', { class: 'cards compact' }, ...items.map(render)),
        )
      : null;
  const heldItems = queue.held ?? [];
  const proposals = queue.proposals ?? [];
  const empty =
    !queue.flagged.length && !queue.superseded.length && !heldItems.length && !merges.length && !proposals.length;
  return h(
    'article',
    { class: 'record', id: 'review' },
    h('h2', { class: 'record-title', text: t('reviewTitle') }),
    empty ? h('p', { class: 'empty', text: t('reviewEmpty') }) : null,
    part('review-proposals', t('reviewProposals'), proposals, proposed),
    part('review-held', t('reviewHeld'), heldItems, held),
    part('review-flagged', t('reviewFlagged'), queue.flagged, queued),
    part('review-superseded', t('reviewSuperseded'), queue.superseded, queued),
    part('review-merges', t('reviewMerges'), merges, merged),
    message,
  );
}
