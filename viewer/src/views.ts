// Pure-ish renderers: data in, DOM out (text only), callbacks for navigation.
import type { FeedItem, ObservationItem, ObservationRecord, SessionView, SummaryItem } from './api';
import { isStale, type WireReceipt } from '#shared/wire/receipts';
import { h, on, type Child } from './dom';
import { absoluteTime, relativeTime, translate, typeLabel, type Key, type Lang } from './i18n';

export interface ViewCtx {
  lang: Lang;
  now: number;
}

export const itemKey = (i: Pick<FeedItem, 'kind' | 'id'>) => `${i.kind}:${i.id}`;

const t = (ctx: ViewCtx, key: Key, vars?: Record<string, string | number>) => translate(ctx.lang, key, vars);

function badge(ctx: ViewCtx, type: string): HTMLElement {
  return h('span', { class: 'badge', 'data-type': type, text: typeLabel(ctx.lang, type) });
}

/** The mark on a note `cairn prime` made from the repository rather than from a session's work. */
function primedBadge(ctx: ViewCtx, source: string | undefined): HTMLElement | null {
  return source === 'prime'
    ? h('span', { class: 'badge', 'data-type': 'primed', title: t(ctx, 'primedHint'), text: t(ctx, 'primed') })
    : null;
}

function when(ctx: ViewCtx, ms: number): HTMLElement {
  return h('time', {
    datetime: new Date(ms).toISOString(),
    title: absoluteTime(ctx.lang, ms),
    text: relativeTime(ctx.lang, ms, ctx.now),
  });
}

function meta(...parts: Child[]): HTMLElement {
  const el = h('div', { class: 'meta' });
  parts
    .filter((p) => p !== null && p !== undefined && p !== false && p !== '')
    .forEach((p, i) => {
      if (i > 0) el.appendChild(h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }));
      el.appendChild(typeof p === 'string' || typeof p === 'number' ? h('span', { text: String(p) }) : (p as Node));
    });
  return el;
}

export function summaryHeadline(ctx: ViewCtx, s: SummaryItem): string {
  return s.request.trim() || s.completed.trim() || t(ctx, 'summary');
}

export function feedCard(ctx: ViewCtx, item: FeedItem, onOpen: (item: FeedItem) => void, fresh = false): HTMLLIElement {
  const isSummary = item.kind === 'summary';
  const title = isSummary ? summaryHeadline(ctx, item) : item.title?.trim() || t(ctx, 'untitled');
  const sub = isSummary ? item.completed.trim() || item.learned.trim() : (item.subtitle?.trim() ?? '');
  const button = h(
    'button',
    { class: 'card-body', type: 'button' },
    h(
      'div',
      { class: 'card-top' },
      badge(ctx, isSummary ? 'summary' : item.type),
      isSummary ? null : primedBadge(ctx, item.source),
      h('span', { class: 'card-id', text: isSummary ? `S${item.id}` : `#${item.id}` }),
    ),
    h('div', { class: 'card-title', text: title }),
    sub ? h('div', { class: 'card-sub', text: sub }) : null,
    meta(item.projectKey, `@${item.author}`, when(ctx, item.createdAt)),
  );
  on(button, 'click', () => onOpen(item));
  const li = h(
    'li',
    { class: `card${isSummary ? ' card-summary' : ''}${fresh ? ' fresh' : ''}`, 'data-key': itemKey(item) },
    button,
  );
  return li;
}

function section(title: string, ...body: Child[]): HTMLElement {
  return h('section', { class: 'block' }, h('h3', { text: title }), ...body);
}

function list(items: string[], cls = ''): HTMLElement {
  return h('ul', { class: `list ${cls}` }, ...items.map((x) => h('li', { text: x })));
}

export function detailHeader(ctx: ViewCtx, onClose: () => void, onBack?: () => void): HTMLElement {
  const bar = h('div', { class: 'detail-bar' });
  if (onBack) {
    const back = h('button', { class: 'ghost', type: 'button', text: `← ${t(ctx, 'back')}` });
    on(back, 'click', onBack);
    bar.appendChild(back);
  }
  const close = h('button', { class: 'ghost close', type: 'button', 'aria-label': t(ctx, 'close'), text: '✕' });
  on(close, 'click', onClose);
  bar.appendChild(close);
  return bar;
}

export function observationDetail(ctx: ViewCtx, r: ObservationRecord, onOpenSession: () => void): HTMLElement {
  const ms = Date.parse(r.createdAt);
  const open = h('button', { class: 'secondary', type: 'button', text: t(ctx, 'openSession') });
  on(open, 'click', onOpenSession);
  return h(
    'article',
    { class: 'record', 'data-record': `observation:${r.id}` },
    h(
      'div',
      { class: 'card-top' },
      badge(ctx, r.type),
      primedBadge(ctx, r.source),
      h('span', { class: 'card-id', text: `#${r.id}` }),
    ),
    h('h2', { class: 'record-title', text: r.title?.trim() || t(ctx, 'untitled') }),
    r.subtitle ? h('p', { class: 'record-sub', text: r.subtitle }) : null,
    meta(
      r.project,
      `@${r.author}`,
      r.device ?? '',
      Number.isNaN(ms) ? '' : when(ctx, ms),
      t(ctx, 'promptN', { n: r.promptNumber }),
      t(ctx, 'tokensN', { n: r.tokens }),
    ),
    r.narrative ? section(t(ctx, 'narrative'), h('p', { class: 'prose', text: r.narrative })) : null,
    r.facts.length ? section(t(ctx, 'facts'), list(r.facts)) : null,
    r.concepts.length
      ? section(
          t(ctx, 'concepts'),
          h('div', { class: 'chips' }, ...r.concepts.map((c) => h('span', { class: 'chip', text: c }))),
        )
      : null,
    r.filesModified.length ? section(t(ctx, 'filesModified'), list(r.filesModified, 'mono')) : null,
    r.filesRead.length ? section(t(ctx, 'filesRead'), list(r.filesRead, 'mono')) : null,
    h('div', { class: 'actions' }, open),
  );
}

function summaryBlocks(ctx: ViewCtx, s: SummaryItem): Child[] {
  const fields: [Key, string | null][] = [
    ['request', s.request],
    ['investigated', s.investigated],
    ['learned', s.learned],
    ['completed', s.completed],
    ['nextSteps', s.nextSteps],
    ['notes', s.notes],
  ];
  return fields
    .filter(([, v]) => v && v.trim())
    .map(([k, v]) => section(t(ctx, k), h('p', { class: 'prose', text: v! })));
}

export function summaryDetail(ctx: ViewCtx, s: SummaryItem, onOpenSession: () => void): HTMLElement {
  const open = h('button', { class: 'secondary', type: 'button', text: t(ctx, 'openSession') });
  on(open, 'click', onOpenSession);
  return h(
    'article',
    { class: 'record', 'data-record': `summary:${s.id}` },
    h('div', { class: 'card-top' }, badge(ctx, 'summary'), h('span', { class: 'card-id', text: `S${s.id}` })),
    h('h2', { class: 'record-title', text: summaryHeadline(ctx, s) }),
    meta(s.projectKey, `@${s.author}`, when(ctx, s.createdAt), t(ctx, 'promptN', { n: s.promptNumber })),
    ...summaryBlocks(ctx, s),
    h('div', { class: 'actions' }, open),
  );
}

export function sessionDetail(ctx: ViewCtx, v: SessionView, onOpen: (item: ObservationItem) => void): HTMLElement {
  const s = v.session;
  return h(
    'article',
    { class: 'record', 'data-record': `session:${s.id}` },
    h('div', { class: 'card-top' }, h('span', { class: 'badge', 'data-type': 'session', text: t(ctx, 'session') })),
    h('h2', { class: 'record-title', text: s.projectKey }),
    meta(
      `@${s.author}`,
      s.platform,
      t(ctx, 'prompts', { n: s.promptCount }),
      t(ctx, 'started', { t: absoluteTime(ctx.lang, s.startedAt) }),
      s.endedAt ? t(ctx, 'ended', { t: absoluteTime(ctx.lang, s.endedAt) }) : t(ctx, 'ongoing'),
    ),
    ...v.summaries.map((sum) => h('div', { class: 'session-summary' }, ...summaryBlocks(ctx, sum))),
    section(
      t(ctx, 'sessionObservations'),
      h(
        'ul',
        { class: 'cards compact' },
        ...v.observations.map((o) => feedCard(ctx, o, (i) => onOpen(i as ObservationItem))),
      ),
    ),
    sessionMemories(ctx, v.receipts ?? [], onOpen),
  );
}

const EVIDENCE_KEY: Record<WireReceipt['evidence']['value'], Key> = {
  current: 'evidenceCurrent',
  changed: 'evidenceChanged',
  gone: 'evidenceGone',
  unknown: 'evidenceUnknown',
};
const CHANNEL_KEY: Record<WireReceipt['channels'][number], Key> = {
  index: 'channelIndex',
  prompt: 'channelPrompt',
  file: 'channelFile',
  mcp: 'channelMcp',
};

/**
 * The memories that went into the session (its receipts), each with how its code stood when it was sent and
 * whether the session fetched it in full; only those the reader may read (the server filters them).
 */
function sessionMemories(
  ctx: ViewCtx,
  receipts: readonly WireReceipt[],
  onOpen: (item: ObservationItem) => void,
): HTMLElement {
  const stale = receipts.filter((r) => isStale(r.evidence.value)).length;
  const cards = receipts.map((r) => {
    const item: ObservationItem = {
      kind: 'observation',
      id: r.id,
      sessionId: null,
      projectKey: r.project,
      type: r.type,
      title: r.title,
      subtitle: null,
      author: r.author,
      createdAt: Date.parse(r.created_at),
    };
    const button = h(
      'button',
      { class: 'card-body', type: 'button' },
      h(
        'div',
        { class: 'card-top' },
        badge(ctx, r.type),
        h('span', {
          class: 'badge evidence',
          'data-evidence': r.evidence.value,
          title: r.evidence.reasons.join(', '),
          text: t(ctx, EVIDENCE_KEY[r.evidence.value] ?? 'evidenceUnknown'),
        }),
        h('span', { class: 'card-id', text: `#${r.id}` }),
      ),
      h('div', { class: 'card-title', text: r.title?.trim() || t(ctx, 'untitled') }),
      meta(
        r.channels.map((c) => t(ctx, CHANNEL_KEY[c] ?? 'channelMcp')).join(', '),
        `@${r.author}`,
        r.fetched_at ? t(ctx, 'memoryFetched') : '',
      ),
    );
    on(button, 'click', () => onOpen(item));
    return h('li', { class: 'card', 'data-receipt': String(r.id) }, button);
  });
  return section(
    t(ctx, 'sessionMemories'),
    receipts.length
      ? h('p', { class: 'memories-count', text: t(ctx, 'memoriesSummary', { n: receipts.length, s: stale }) })
      : h('p', { class: 'memories-count', text: t(ctx, 'noMemories') }),
    h('ul', { class: 'cards compact memories' }, ...cards),
  );
}
