// A record's versions in the detail pane: its history (who, when, why, what each version changed), a diff of any
// version against the current one, revert, and the edit form. Renderers take callbacks; main.ts wires them to the
// API (GET /api/corrections/history, /diff; POST /api/corrections/edit, /revert). Every text is set as text
// (dom.ts), never parsed.
import type { ObservationRecord } from './api';
import { h, on } from './dom';
import type { Key } from './i18n';

type Translate = (key: Key, vars?: Record<string, string | number>) => string;

type FieldValue = string | null | string[];
export type Changes = Record<string, { from: FieldValue; to: FieldValue }>;

export interface VersionItem {
  version: number;
  action: string;
  actor: string;
  who: string | null;
  reason: string | null;
  at: string;
  changes: Changes;
  state: { superseded_by?: { from: number | null; to: number | null } };
}

export interface RecordHistory {
  id: number;
  version: number;
  superseded_by: number | null;
  versions: VersionItem[];
}

export interface Diff {
  from: number;
  to: number;
  changes: Changes;
  superseded_by?: { from: number | null; to: number | null };
}

/** What the panels ask for; each answers what to show (a message, or a diff). */
export interface VersionActions {
  diff(from: number): Promise<Diff | string>;
  revert(to: number): Promise<string>;
}

export interface EditFields {
  title: string;
  narrative: string | null;
  facts: string[];
}

const show = (v: FieldValue): string => (v === null ? '—' : Array.isArray(v) ? v.join(' · ') || '—' : v);

/** One field's change: the old value struck out above the new one (each its own text node). */
function changeRows(changes: Changes): HTMLElement {
  const rows = Object.entries(changes).map(([field, c]) =>
    h(
      'div',
      { class: 'change', 'data-field': field },
      h('div', { class: 'meta', text: field }),
      h('del', { class: 'was', text: show(c.from) }),
      h('ins', { class: 'now', text: show(c.to) }),
    ),
  );
  return h('div', { class: 'changes' }, ...rows);
}

const status = (t: Translate, id: number, v: number | null) =>
  v === null ? t('versionCurrent') : v === id ? t('outdatedMark') : t('supersededBy', { n: v });

export function historyPanel(t: Translate, hist: RecordHistory, actions: VersionActions): HTMLElement {
  const message = h('p', { id: 'history-message', role: 'status' });
  const list = h('ol', { class: 'list', id: 'history-list' });
  for (const v of [...hist.versions].reverse()) {
    const who = v.who ? ` · @${v.who}` : '';
    const what = v.action === 'create' ? t('versionCreated', { how: v.actor }) : v.action;
    const li = h(
      'li',
      { class: 'card', 'data-version': String(v.version) },
      h(
        'div',
        { class: 'card-top' },
        h('span', { class: 'card-id', text: `v${v.version}` }),
        h('span', { class: 'meta', text: `${what}${who} · ${new Date(v.at).toLocaleString()}` }),
      ),
      v.reason ? h('div', { class: 'card-sub', text: v.reason }) : '',
      v.state.superseded_by
        ? h('div', {
            class: 'meta',
            text: `${status(t, hist.id, v.state.superseded_by.from)} → ${status(t, hist.id, v.state.superseded_by.to)}`,
          })
        : '',
      Object.keys(v.changes).length ? changeRows(v.changes) : '',
    );
    if (v.version !== hist.version) {
      const out = h('div', { class: 'diff', 'data-diff': String(v.version) });
      const diff = h('button', { class: 'secondary', type: 'button', 'data-action': 'diff', text: t('versionDiff') });
      const back = h('button', {
        class: 'secondary',
        type: 'button',
        'data-action': 'revert',
        text: t('versionRevert'),
      });
      on(diff, 'click', () => {
        out.textContent = '…';
        void actions.diff(v.version).then((d) => {
          out.textContent = '';
          if (typeof d === 'string') out.append(h('p', { text: d }));
          else if (!Object.keys(d.changes).length && !d.superseded_by) out.append(h('p', { text: t('versionSame') }));
          else {
            out.append(h('div', { class: 'meta', text: t('versionDiffTitle', { a: d.from, b: d.to }) }));
            if (d.superseded_by)
              out.append(
                h('div', {
                  class: 'meta',
                  text: `${status(t, hist.id, d.superseded_by.from)} → ${status(t, hist.id, d.superseded_by.to)}`,
                }),
              );
            out.append(changeRows(d.changes));
          }
        });
      });
      on(back, 'click', () => {
        message.textContent = '…';
        void actions.revert(v.version).then((m) => {
          message.textContent = m;
        });
      });
      li.append(h('div', { class: 'actions' }, diff, back), out);
    }
    list.append(li);
  }
  return h(
    'section',
    { class: 'block', id: 'history' },
    h('h3', { text: t('historyTitle', { n: hist.id, k: hist.versions.length }) }),
    message,
    list,
  );
}

/** The edit form: title, narrative and facts (one a line); the reason is kept with the version. */
export function editForm(
  t: Translate,
  rec: Pick<ObservationRecord, 'id' | 'title' | 'narrative' | 'facts'>,
  save: (fields: Partial<EditFields> & { reason?: string }) => Promise<string>,
): HTMLElement {
  const title = h('input', { id: 'edit-title', type: 'text', maxlength: '200', 'aria-label': t('editTitle') });
  title.value = rec.title ?? '';
  const narrative = h('textarea', {
    id: 'edit-narrative',
    rows: '6',
    maxlength: '8000',
    'aria-label': t('editNarrative'),
  });
  narrative.value = rec.narrative ?? '';
  const facts = h('textarea', { id: 'edit-facts', rows: '4', 'aria-label': t('editFacts') });
  facts.value = rec.facts.join('\n');
  const reason = h('input', { id: 'edit-reason', type: 'text', maxlength: '500', placeholder: t('reasonLabel') });
  const message = h('p', { id: 'edit-message', role: 'status' });
  const saveButton = h('button', { id: 'edit-save', type: 'button', text: t('editSave') });
  on(saveButton, 'click', () => {
    const fields: Partial<EditFields> & { reason?: string } = {};
    if (title.value.trim() !== (rec.title ?? '')) fields.title = title.value.trim();
    if (narrative.value.trim() !== (rec.narrative ?? '')) fields.narrative = narrative.value.trim() || null;
    const list = facts.value
      .split('\n')
      .map((f) => f.trim())
      .filter(Boolean);
    if (list.join('\n') !== rec.facts.join('\n')) fields.facts = list;
    if (!Object.keys(fields).length) {
      message.textContent = t('editNothing');
      return;
    }
    if (reason.value.trim()) fields.reason = reason.value.trim();
    message.textContent = '…';
    void save(fields).then((m) => {
      message.textContent = m;
    });
  });
  return h(
    'section',
    { class: 'block', id: 'edit' },
    h('h3', { text: t('editHeading', { n: rec.id }) }),
    h('label', { text: t('editTitle') }),
    title,
    h('label', { text: t('editNarrative') }),
    narrative,
    h('label', { text: t('editFacts') }),
    facts,
    reason,
    h('div', { class: 'actions' }, saveButton),
    message,
  );
}

/** The History and Edit buttons under a record. */
export function versionButtons(t: Translate, open: { history(): void; edit(): void }): HTMLElement {
  const history = h('button', { id: 'history-open', class: 'secondary', type: 'button', text: t('historyOpen') });
  const edit = h('button', { id: 'edit-open', class: 'secondary', type: 'button', text: t('editOpen') });
  on(history, 'click', () => open.history());
  on(edit, 'click', () => open.edit());
  return h('div', { class: 'actions', id: 'version-buttons' }, history, edit);
}
