// The viewer app: sign-in, project and filters, feed with live updates, search, record and session views.
import { inertText } from '#shared/inert';
import {
  Api,
  ApiError,
  type FeedItem,
  type ObservationItem,
  type ObservationRecord,
  type Project,
  type SearchResult,
  type SessionView,
  type SummaryItem,
} from './api';
import { byId, clear, h, on } from './dom';
import { KNOWN_TYPES, pickLang, translate, type Key, type Lang } from './i18n';
import { fillFilterLists, mainLayout } from './layout';
import { runLive, type LiveState } from './live';
import { signInScreen } from './sign-in';
import { SPEND_DAYS, spendPanel, type UsageReport } from './spend';
import { correctionControls, correctionStatus, type FeedbackKind } from './corrections';
import { reviewActions, reviewPanel, type MergeItem, type ReviewQueue } from './review';
import { editForm, historyPanel, versionButtons, type Diff, type RecordHistory } from './versions';
import {
  detailHeader,
  feedCard,
  itemKey,
  observationDetail,
  sessionDetail,
  summaryDetail,
  type ViewCtx,
} from './views';

const TOKEN_KEY = 'cairn.token';
const LANG_KEY = 'cairn.lang';

const state = {
  lang: pickLang(localStorage.getItem(LANG_KEY), navigator.language) as Lang,
  api: null as Api | null,
  me: null as { team: string; handle: string; role: string } | null,
  projects: [] as Project[],
  authors: [] as string[],
  types: new Set<string>(KNOWN_TYPES),
  project: '',
  type: '',
  author: '',
  q: '',
  mode: 'feed' as 'feed' | 'search',
  next: null as string | null,
  shown: new Set<string>(),
  live: null as AbortController | null,
  detail: [] as HTMLElement[],
  /** Bumped on every reload so answers to superseded requests are dropped. */
  gen: 0,
};

const root = byId('app');
const t = (key: Key, vars?: Record<string, string | number>) => translate(state.lang, key, vars);
const ctx = (): ViewCtx => ({ lang: state.lang, now: Date.now() });

function messageFor(e: unknown): string {
  if (!(e instanceof ApiError)) return t('networkError');
  const byCode: Record<string, Key> = {
    invalid_token: 'tokenInvalid',
    missing_token: 'tokenInvalid',
    token_expired: 'tokenExpired',
    token_revoked: 'tokenRevoked',
    insufficient_scope: 'tokenScope',
    network: 'networkError',
  };
  const key = byCode[e.code];
  if (key) return t(key);
  return e.status === 401 ? t('tokenInvalid') : t('serverError', { code: e.code });
}

function setLang(): void {
  document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
}

function langButton(): HTMLButtonElement {
  const b = h('button', { id: 'lang', class: 'ghost', type: 'button', text: t('language') });
  on(b, 'click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    localStorage.setItem(LANG_KEY, state.lang);
    if (state.api) renderMain();
    else renderSignIn();
  });
  return b;
}

// ---- sign-in -------------------------------------------------------------------------------------------

function renderSignIn(message = ''): void {
  setLang();
  clear(root);
  const { main, input } = signInScreen(t, message, langButton(), signIn);
  root.append(main);
  input.focus();
}

/** Checks the token against the server; on success stores it and shows the app. Returns an error message. */
async function signIn(token: string, remember: boolean): Promise<string | null> {
  const api = new Api(token);
  try {
    state.me = await api.get<{ team: string; handle: string; role: string }>('/api/viewer/me');
  } catch (e) {
    return messageFor(e);
  }
  (remember ? localStorage : sessionStorage).setItem(TOKEN_KEY, token);
  state.api = api;
  renderMain();
  return null;
}

function signOut(message = ''): void {
  state.live?.abort();
  state.live = null;
  state.api = null;
  state.me = null;
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TOKEN_KEY);
  renderSignIn(message);
}

/** Any 401 while using the app means the token stopped working: back to sign-in with the reason. */
function handle(e: unknown): void {
  if ((e as Error).name === 'AbortError') return;
  if (e instanceof ApiError && e.status === 401) {
    signOut(messageFor(e));
    return;
  }
  console.warn('viewer request failed', e instanceof ApiError ? e.code : (e as Error).message);
  showDetail(h('p', { class: 'error', role: 'alert', text: messageFor(e) }), false);
}

// ---- main screen ---------------------------------------------------------------------------------------

function renderMain(): void {
  setLang();
  clear(root);
  const who = state.me ? t('signedInAs', { who: `@${state.me.handle}`, team: state.me.team }) : '';
  const admin = state.me?.role === 'owner' || state.me?.role === 'admin';
  const { project, type, author, q, searchForm, signout, spend, review } = mainLayout(
    root,
    t,
    who,
    state.q,
    langButton(),
    admin,
  );
  fillFilters();
  on(project, 'change', () => {
    state.project = project.value;
    void reload(true);
  });
  on(type, 'change', () => {
    state.type = type.value;
    void reload(false);
  });
  on(author, 'change', () => {
    state.author = author.value;
    void reload(false);
  });
  on(searchForm, 'submit', (e) => {
    e.preventDefault();
    state.q = q.value.trim();
    state.mode = state.q ? 'search' : 'feed';
    void reload(false);
  });
  on(byId('clear-search'), 'click', () => {
    state.q = '';
    q.value = '';
    state.mode = 'feed';
    void reload(false);
  });
  on(byId('more'), 'click', () => void loadFeed(true));
  on(signout, 'click', () => signOut());
  on(spend, 'click', () => void openSpend());
  on(review, 'click', () => void openReview());
  void Promise.all([loadProjects(), loadAuthors()]).then(fillFilters, handle);
  void reload(true);
}

/**
 * Says so above the feed when the team's memory is paused (the observer's key refused…), delayed or behind:
 * the server's own sentence, which names what fixes it. Read with each reload; no answer hides it.
 */
async function loadMemoryState(): Promise<void> {
  const el = document.getElementById('memory-notice');
  if (!el || !state.api) return;
  try {
    const s = await state.api.get<{ notice: string | null }>('/api/observer/state');
    el.textContent = inertText(s.notice ?? '');
    el.hidden = !s.notice;
  } catch {
    el.hidden = true;
  }
}

function fillFilters(): void {
  if (document.getElementById('project')) fillFilterLists(t, state.lang, state);
}

async function loadProjects(): Promise<void> {
  state.projects = (await state.api!.get<{ projects: Project[] }>('/api/projects')).projects;
}

async function loadAuthors(): Promise<void> {
  state.authors = (await state.api!.get<{ authors: string[] }>('/api/viewer/authors')).authors;
}

// ---- feed, search and live -----------------------------------------------------------------------------

async function reload(restartLive: boolean): Promise<void> {
  state.gen++;
  state.shown.clear();
  state.next = null;
  clear(byId('cards'));
  byId('clear-search').hidden = state.mode !== 'search';
  byId('feed-title').textContent = state.mode === 'search' ? t('resultsFor', { q: state.q }) : t('recent');
  byId('feed-count').textContent = '';
  if (restartLive) startLive();
  void loadMemoryState();
  if (state.mode === 'search') await runSearch();
  else await loadFeed(false);
}

function addCards(items: FeedItem[], where: 'top' | 'bottom', fresh = false): void {
  const list = byId('cards');
  const nodes: HTMLElement[] = [];
  for (const item of items) {
    const key = itemKey(item);
    if (state.shown.has(key)) continue;
    state.shown.add(key);
    if (item.kind === 'observation' && !state.types.has(item.type) && item.type !== 'sensitive') {
      state.types.add(item.type);
      fillFilters();
    }
    nodes.push(feedCard(ctx(), item, openItem, fresh));
  }
  if (where === 'top') list.prepend(...nodes);
  else list.append(...nodes);
  const empty = byId('feed-empty');
  empty.hidden = state.shown.size > 0;
  empty.textContent = state.mode === 'search' ? t('noResults') : t('empty');
}

const feedQuery = (before?: string) => ({
  project: state.project || undefined,
  type: state.type || undefined,
  author: state.author || undefined,
  before,
  limit: '40',
});

async function loadFeed(more: boolean): Promise<void> {
  const more_ = byId('more') as HTMLButtonElement;
  const gen = state.gen;
  try {
    more_.disabled = true;
    const page = await state.api!.get<{ items: FeedItem[]; next: string | null }>(
      '/api/viewer/feed',
      feedQuery(more ? (state.next ?? undefined) : undefined),
    );
    if (state.mode !== 'feed' || gen !== state.gen) return;
    state.next = page.next;
    addCards(page.items, 'bottom');
    more_.hidden = page.next === null;
  } catch (e) {
    handle(e);
  } finally {
    more_.disabled = false;
  }
}

/** After a reconnect, fetch the newest page so nothing stored while offline is missed. */
async function catchUp(): Promise<void> {
  if (state.mode !== 'feed') return;
  const gen = state.gen;
  const page = await state.api!.get<{ items: FeedItem[] }>('/api/viewer/feed', feedQuery());
  if (gen === state.gen) addCards(page.items, 'top', true);
}

async function runSearch(): Promise<void> {
  byId('more').hidden = true;
  const gen = state.gen;
  try {
    const res = await state.api!.get<{ results: SearchResult[]; total: number }>('/api/search', {
      q: state.q,
      project: state.project || undefined,
      type: state.type && state.type !== 'summary' ? state.type : undefined,
      author: state.author || undefined,
      limit: '40',
    });
    if (state.mode !== 'search' || gen !== state.gen) return;
    byId('feed-count').textContent = t('resultCount', { n: res.total });
    const items: ObservationItem[] = res.results.map((r) => ({
      kind: 'observation',
      id: r.id,
      sessionId: null,
      projectKey: r.project,
      type: r.type,
      title: r.title,
      subtitle: null,
      author: r.author,
      createdAt: Date.parse(r.time),
      score: r.score,
    }));
    addCards(items, 'bottom');
  } catch (e) {
    handle(e);
  }
}

function setLive(s: LiveState): void {
  const el = document.getElementById('live-status');
  if (!el) return;
  el.dataset.state = s;
  el.textContent = t(s === 'live' ? 'live' : s === 'connecting' ? 'connecting' : 'offline');
}

function wanted(item: FeedItem): boolean {
  if (state.author && item.author !== state.author) return false;
  if (!state.type) return true;
  return item.kind === 'summary' ? state.type === 'summary' : item.type === state.type;
}

function startLive(): void {
  state.live?.abort();
  const ctrl = new AbortController();
  state.live = ctrl;
  void runLive(state.api!, { project: state.project || undefined }, ctrl.signal, {
    onState: setLive,
    onReady: (reconnected) => {
      if (reconnected) void catchUp().catch(handle);
    },
    onItem: (item) => {
      if (state.mode === 'feed' && wanted(item)) addCards([item], 'top', true);
    },
    onUnauthorized: (e) => signOut(messageFor(e)),
  });
}

// ---- detail panel --------------------------------------------------------------------------------------

function showDetail(node: HTMLElement, push: boolean): void {
  const panel = byId('detail');
  if (!push) state.detail = [];
  state.detail.push(node);
  clear(panel);
  const back =
    state.detail.length > 1
      ? () => {
          state.detail.pop();
          showDetail(state.detail.pop()!, true);
        }
      : undefined;
  panel.append(detailHeader(ctx(), closeDetail, back), node);
  panel.classList.add('open');
  panel.scrollTop = 0;
}

function closeDetail(): void {
  state.detail = [];
  const panel = byId('detail');
  panel.classList.remove('open');
  clear(panel);
  panel.append(h('p', { class: 'empty', text: t('pickItem') }));
}

function openItem(item: FeedItem, push = false): void {
  if (item.kind === 'summary') {
    showDetail(
      summaryDetail(ctx(), item as SummaryItem, () => void openSession({ id: item.sessionId })),
      push,
    );
    return;
  }
  showDetail(h('p', { class: 'empty', text: t('loading') }), push);
  void state
    .api!.get<{ observations: ObservationRecord[] }>('/api/observations', { ids: String(item.id) })
    .then((res) => {
      const rec = res.observations[0];
      state.detail.pop();
      if (!rec) return showDetail(h('p', { class: 'empty', text: t('notAvailable') }), true);
      const detail = observationDetail(ctx(), rec, () => void openSession({ key: rec.session }));
      const status = correctionStatus(t, rec);
      if (status) detail.insertBefore(status, detail.children[2] ?? null);
      detail.append(
        versionButtons(t, { history: () => void openHistory(rec.id), edit: () => openEdit(rec) }),
        correctionControls(t, correctionActions(rec.id)),
      );
      showDetail(detail, true);
    }, handle);
}

async function openSession(ref: { id?: number; key?: string }): Promise<void> {
  try {
    const view = ref.id
      ? await state.api!.get<SessionView>(`/api/viewer/sessions/${ref.id}`)
      : await state.api!.get<SessionView>('/api/viewer/sessions', { key: ref.key });
    showDetail(
      sessionDetail(ctx(), view, (o) => openItem(o, true)),
      true,
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 404)
      showDetail(h('p', { class: 'empty', text: t('notAvailable') }), true);
    else handle(e);
  }
}

/** The spend panel in the detail pane; a token without the admin scope gets a sentence, not an error. */
async function openSpend(): Promise<void> {
  showDetail(h('p', { class: 'empty', text: t('loading') }), false);
  try {
    const report = await state.api!.get<UsageReport>('/api/admin/usage', { days: String(SPEND_DAYS) });
    showDetail(spendPanel(state.lang, report), false);
  } catch (e) {
    if (e instanceof ApiError && e.status === 403)
      showDetail(h('p', { id: 'spend-denied', class: 'empty', text: t('spendAdminOnly') }), false);
    else handle(e);
  }
}

// ---- corrections and review ---------------------------------------------------------------------------

/** What a refused correction says: the server's reason for a 403, else the usual messages. */
function correctionError(e: unknown): string {
  if (e instanceof ApiError && e.status === 403) return t('correctDenied');
  if (e instanceof ApiError && e.status === 401) {
    signOut(messageFor(e));
    return '';
  }
  return messageFor(e);
}

function correctionActions(id: number) {
  return {
    supersede: (by: number | null, reason: string) =>
      state
        .api!.post('/api/corrections/supersede', by === null ? { id, reason } : { id, by, reason })
        .then(() => t('corrected'), correctionError),
    feedback: (kind: FeedbackKind, reason: string) =>
      state
        .api!.post<{ counted: boolean }>('/api/corrections/feedback', reason ? { id, kind, reason } : { id, kind })
        .then(
          (r) => (!r.counted ? t('alreadySaid') : kind === 'useful' ? t('notedUseful') : t('flagged')),
          correctionError,
        ),
  };
}

// ---- versions -------------------------------------------------------------------------------------------

/** What a refused edit or revert says: who may, for a 403; else the usual messages. */
function versionError(e: unknown): string {
  if (e instanceof ApiError && e.status === 403) return t('versionDenied');
  return correctionError(e);
}

/** A record's versions in the detail pane, with a diff of each against now and revert. */
async function openHistory(id: number): Promise<void> {
  showDetail(h('p', { class: 'empty', text: t('loading') }), true);
  try {
    const hist = await state.api!.get<RecordHistory>('/api/corrections/history', { id: String(id) });
    state.detail.pop();
    showDetail(
      historyPanel(t, hist, {
        diff: (from) =>
          state.api!.get<Diff>('/api/corrections/diff', { id: String(id), from: String(from) }).catch(versionError),
        revert: (to) =>
          state
            .api!.post<{ version: number; changed: string[] }>('/api/corrections/revert', { id, to })
            .then(
              (r) =>
                r.changed.length
                  ? t('versionReverted', { n: id, v: to, w: r.version })
                  : t('versionUnchanged', { n: id, v: to }),
              versionError,
            ),
      }),
      true,
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 404)
      showDetail(h('p', { class: 'empty', text: t('notAvailable') }), true);
    else handle(e);
  }
}

function openEdit(rec: ObservationRecord): void {
  showDetail(
    editForm(t, rec, (fields) =>
      state
        .api!.post<{ version: number; changed: string[] }>('/api/corrections/edit', { id: rec.id, ...fields })
        .then((r) => (r.changed.length ? t('editSaved', { n: rec.id, v: r.version }) : t('editNothing')), versionError),
    ),
    true,
  );
}

/** The review queue in the detail pane (admins); anyone else gets the spend panel's sentence. */
async function openReview(): Promise<void> {
  showDetail(h('p', { class: 'empty', text: t('loading') }), false);
  try {
    const api = state.api!;
    const [queue, merged] = await Promise.all([
      api.get<ReviewQueue>('/api/admin/review'),
      api.get<{ merges: MergeItem[] }>('/api/admin/merges'),
    ]);
    showDetail(reviewPanel(t, queue, merged.merges, reviewActions(api, t, correctionError)), false);
  } catch (e) {
    if (e instanceof ApiError && e.status === 403)
      showDetail(h('p', { class: 'empty', text: t('spendAdminOnly') }), false);
    else handle(e);
  }
}

// ---- start ---------------------------------------------------------------------------------------------

function start(): void {
  const saved = sessionStorage.getItem(TOKEN_KEY) ?? localStorage.getItem(TOKEN_KEY);
  if (!saved) {
    renderSignIn();
    return;
  }
  const remembered = localStorage.getItem(TOKEN_KEY) === saved;
  void signIn(saved, remembered).then((err) => {
    if (err !== null) signOut(err);
  });
}

start();
