// The correction controls under a record (supersede with a reason, flag wrong / outdated / useful). Renderers
// take callbacks; main.ts wires them to the API. The admins' review queue is review.ts.
import { inertText } from '#shared/inert';
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
  return h('p', {
    class: 'error',
    'data-status': 'superseded',
    text: r.supersededBy === r.id ? t('outdatedMark') : t('supersededBy', { n: r.supersededBy }),
  });
}

export function correctionControls(t: Translate, actions: CorrectionActions): HTMLElement {
  const reason = h('input', {
    id: 'correct-reason',
    type: 'text',
    maxlength: '500',
    placeholder: t('reasonLabel'),
    'aria-label': t('reasonLabel'),
  });
  const by = h('input', {
    id: 'correct-by',
    type: 'text',
    inputmode: 'numeric',
    placeholder: t('byLabel'),
    'aria-label': t('byLabel'),
  });
  const message = h('p', { id: 'correct-message', role: 'status' });
  const run = (work: () => Promise<string>) => {
    message.textContent = '…';
    void work().then((m) => {
      message.textContent = inertText(m);
    });
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
  const flag = (kind: FeedbackKind, label: string) =>
    button(`flag-${kind}`, label, () => run(() => actions.feedback(kind, reason.value.trim())));
  return h(
    'section',
    { class: 'block', id: 'corrections' },
    h('h3', { text: t('correctTitle') }),
    reason,
    h(
      'div',
      { class: 'actions' },
      flag('wrong', t('flagWrong')),
      flag('outdated', t('flagOutdated')),
      flag('useful', t('flagUseful')),
    ),
    by,
    h('div', { class: 'actions' }, supersede),
    message,
  );
}
