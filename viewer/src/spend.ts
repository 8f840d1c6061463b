// The spend panel: the observer's tokens and estimated cost per model over the last days, and the team's
// budget, from GET /api/admin/usage (the prices come from the server's table; the viewer never prices).
import type { ModelUsage, UsageReport } from '#shared/wire/usage';
import { h, type Child } from './dom';
import { absoluteTime, formatTokens, formatUsd, translate, type Key, type Lang } from './i18n';

export type { UsageReport };

/** How many days the panel reports on. */
export const SPEND_DAYS = 30;

const COLUMNS: [Key, (m: ModelUsage) => number][] = [
  ['spendCalls', (m) => m.calls],
  ['spendInput', (m) => m.input_tokens],
  ['spendOutput', (m) => m.output_tokens],
  ['spendCacheRead', (m) => m.cache_read_tokens],
  ['spendCacheWrite', (m) => m.cache_write_tokens],
];

function row(lang: Lang, m: ModelUsage): HTMLTableRowElement {
  const t = (key: Key) => translate(lang, key);
  return h(
    'tr',
    { 'data-model': m.model },
    h('th', { scope: 'row', class: 'mono', text: m.model }),
    ...COLUMNS.map(([, get]) => h('td', { class: 'num', text: formatTokens(lang, get(m)) })),
    h('td', { class: 'num cost', text: formatUsd(lang, m.estimated_cost_usd) ?? t('spendNoPrice') }),
  );
}

function budgetLine(lang: Lang, r: UsageReport): Child {
  const b = r.budget;
  if (!b) return h('p', { class: 'muted', text: translate(lang, 'spendNoBudget') });
  const parts: string[] = [];
  if (b.per_day !== null)
    parts.push(
      translate(lang, 'spendBudgetDay', {
        spent: formatTokens(lang, b.spent_today),
        of: formatTokens(lang, b.per_day),
      }),
    );
  if (b.per_month !== null)
    parts.push(
      translate(lang, 'spendBudgetMonth', {
        spent: formatTokens(lang, b.spent_this_month),
        of: formatTokens(lang, b.per_month),
      }),
    );
  const out =
    b.exhausted && b.until !== null ? translate(lang, 'spendBudgetOut', { t: absoluteTime(lang, b.until) }) : '';
  return h('p', {
    id: 'spend-budget',
    class: b.exhausted ? 'error' : 'muted',
    text: [parts.join(' · '), out].filter(Boolean).join(' — '),
  });
}

export function spendPanel(lang: Lang, r: UsageReport): HTMLElement {
  const t = (key: Key, vars?: Record<string, string | number>) => translate(lang, key, vars);
  const readOnly = r.observer.read_only_model ? ` ${t('spendReadOnly', { model: r.observer.read_only_model })}` : '';
  const observer = r.observer.model ? `${r.observer.provider} · ${r.observer.model}${readOnly}` : t('spendHeuristic');
  const total = formatUsd(lang, r.estimated_cost_usd) ?? t('spendNoPrice');
  const table = r.models.length
    ? h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { id: 'spend-models', class: 'spend' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col', text: t('spendModel') }),
              ...COLUMNS.map(([k]) => h('th', { scope: 'col', class: 'num', text: t(k) })),
              h('th', { scope: 'col', class: 'num', text: t('spendCost') }),
            ),
          ),
          h('tbody', {}, ...r.models.map((m) => row(lang, m))),
          h(
            'tfoot',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'row', text: t('spendTotal') }),
              h('td', {
                class: 'num',
                colspan: String(COLUMNS.length),
                text: t('spendTokensN', { n: formatTokens(lang, r.total_tokens) }),
              }),
              h('td', { id: 'spend-total', class: 'num cost', text: total }),
            ),
          ),
        ),
      )
    : h('p', { class: 'empty', text: t('spendNone') });
  return h(
    'article',
    { class: 'record', 'data-record': 'spend' },
    h('h2', { class: 'record-title', text: t('spendTitle', { n: SPEND_DAYS }) }),
    h('p', { id: 'spend-observer', class: 'record-sub', text: t('spendObserver', { who: observer }) }),
    table,
    budgetLine(lang, r),
    h('p', { class: 'muted small', text: t('spendEstimate') }),
  );
}
