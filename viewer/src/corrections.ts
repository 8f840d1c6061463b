// The correction controls under a record (supersede with a reason, flag wrong / outdated / useful) and the
// admins' review queue. Renderers take callbacks; main.ts wires them to the API.
import type { ObservationRecord } from './api';
import { h, on } from './dom';
import type { Key } from './i18n';

type Translate = (key: Key, vars?: Record<string, string | number>) => string;
export type FeedbackKind = 'wrong' | 'outdated' | 'useful';

/** What the controls ask for; each answers the message to show. */
export interface CorrectionActions {
  supersede(by: number | null, reason: string): Promise<string>;
  feedback(kind: FeedbackKind, reason: string): Promise<string>;
}

/** "Superseded by #N" / "Outdated" above a record that is no longer current; null for a current one. */
export function correctionStatus(t: Translate, r: Pick<ObservationRecord, 'id' | 'supersededBy'>): HTMLElement | null {
  if (r.supersededBy == null) return null;
  return h('p', { class: 'error', 'data-status': 'superseded', text: r.supersededBy === r.id ? t('outdatedMark') : t('supersededBy', { n: r.supersededBy }) });
}

export function correctionControls(t: Translate, actions: CorrectionActions): HTMLElement {
  const reason = h('input', { id: 'correct-reason', type: 'text', maxlength: '500', placeholder: t('reasonLabel'), 'aria-label': t('reasonLabel') });
  const by = h('input', { id: 'correct-by', type: 'text', inputmode: 'numeric', placeholder: t('byLabel'), 'aria-label': t('byLabel') });
  const message = h('p', { id: 'correct-message', role: 'status' });
  const run = (work: () => Promise<string>) => {
    message.textContent = '…';
    void work().then((m) => { message.textContent = m; });
  };
  const button = (id: string, label: string, fn: () => void) => {
    const b = h('button', { id, class: 'secondary', type: 'button', text: label });
    on(b, 'click', fn);
    return b;
  };
  const supersede = button('correct-supersede', t('supersede'), () => {
    const why = reason.value.trim();
    if (!why) {
      message.textContent = t('reasonNeeded');
      return;
    }
    const n = /^#?(\d{1,15})$/.exec(by.value.trim());
    run(() => actions.supersede(n ? Number(n[1]) : null, why));
  });
  const flag = (kind: FeedbackKind, label: string) => button(`flag-${kind}`, label, () => run(() => actions.feedback(kind, reason.value.trim())));
  return h(
    'section',
    { class: 'block', id: 'corrections' },
    h('h3', { text: t('correctTitle') }),
    reason,
    h('div', { class: 'actions' }, flag('wrong', t('flagWrong')), flag('outdated', t('flagOutdated')), flag('useful', t('flagUseful'))),
    by,
    h('div', { class: 'actions' }, supersede),
    message,
  );
}

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

export type Decision = 'confirm' | 'restore' | 'keep';

export function reviewPanel(t: Translate, queue: { flagged: QueueItem[]; superseded: QueueItem[] }, decide: (id: number, d: Decision) => Promise<string>): HTMLElement {
  const message = h('p', { id: 'review-message', role: 'status' });
  const row = (item: QueueItem): HTMLElement => {
    const li = h('li', { class: 'card', 'data-review': String(item.id) });
    const why = item.last ? `${item.last.action}${item.last.who ? ` · @${item.last.who}` : ''}${item.last.reason ? `: ${item.last.reason}` : ''}` : '';
    const buttons = (['confirm', 'restore', 'keep'] as const).map((d) => {
      const b = h('button', { class: 'secondary', type: 'button', 'data-decision': d, text: t(d === 'confirm' ? 'reviewConfirm' : d === 'restore' ? 'reviewRestore' : 'reviewKeep') });
      on(b, 'click', () => {
        void decide(item.id, d).then((m) => {
          message.textContent = m;
          li.remove();
        });
      });
      return b;
    });
    li.append(
      h('div', { class: 'card-top' }, h('span', { class: 'card-id', text: `#${item.id}` })),
      h('div', { class: 'card-title', text: item.title ?? '' }),
      h('div', { class: 'meta', text: `${item.project} · @${item.author}${item.superseded_by != null && item.superseded_by !== item.id ? ` · ${t('supersededBy', { n: item.superseded_by })}` : ''}` }),
      why ? h('div', { class: 'card-sub', text: why }) : '',
      h('div', { class: 'actions' }, ...buttons),
    );
    return li;
  };
  const part = (title: string, items: QueueItem[]) => (items.length ? h('section', { class: 'block' }, h('h3', { text: title }), h('ul', { class: 'cards compact' }, ...items.map(row))) : null);
  const empty = !queue.flagged.length && !queue.superseded.length;
  return h(
    'article',
    { class: 'record', id: 'review' },
    h('h2', { class: 'record-title', text: t('reviewTitle') }),
    empty ? h('p', { class: 'empty', text: t('reviewEmpty') }) : null,
    part(t('reviewFlagged'), queue.flagged),
    part(t('reviewSuperseded'), queue.superseded),
    message,
  );
}
