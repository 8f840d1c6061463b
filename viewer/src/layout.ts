// The main screen's skeleton: top bar (filters, search, account), feed and detail panes, and the filter lists.
import type { Project } from './api';
import { byId, clear, h } from './dom';
import { typeLabel, type Key, type Lang } from './i18n';

type Translate = (key: Key, vars?: Record<string, string | number>) => string;

export interface MainControls {
  project: HTMLSelectElement;
  type: HTMLSelectElement;
  author: HTMLSelectElement;
  q: HTMLInputElement;
  searchForm: HTMLFormElement;
  signout: HTMLButtonElement;
  /** Opens the spend panel; hidden for members, who cannot read it. */
  spend: HTMLButtonElement;
  /** Opens the review queue (admins, like spend). */
  review: HTMLButtonElement;
}

/** Builds the screen into `root`; the caller wires the returned controls (other parts are found by id). */
export function mainLayout(
  root: HTMLElement,
  t: Translate,
  who: string,
  query: string,
  langButton: HTMLElement,
  canSeeSpend: boolean,
): MainControls {
  const project = h('select', { id: 'project', 'aria-label': t('allProjects') });
  const type = h('select', { id: 'type', 'aria-label': t('allTypes') });
  const author = h('select', { id: 'author', 'aria-label': t('allAuthors') });
  const q = h('input', {
    id: 'q',
    type: 'search',
    placeholder: t('searchPlaceholder'),
    enterkeyhint: 'search',
    value: query,
  });
  const searchForm = h(
    'form',
    { class: 'search', role: 'search' },
    q,
    h('button', { class: 'primary', type: 'submit', text: t('search') }),
  );
  const signout = h('button', { id: 'signout', class: 'ghost', type: 'button', text: t('signOut') });
  const spend = h('button', {
    id: 'spend',
    class: 'ghost',
    type: 'button',
    text: t('spend'),
    hidden: canSeeSpend ? undefined : '',
  });
  const review = h('button', {
    id: 'review-open',
    class: 'ghost',
    type: 'button',
    text: t('review'),
    hidden: canSeeSpend ? undefined : '',
  });
  root.append(
    h(
      'header',
      { class: 'topbar' },
      h(
        'div',
        { class: 'brand' },
        h('img', { src: '/viewer/icon.svg', alt: '', width: '24', height: '24' }),
        h('span', { text: 'cairn' }),
      ),
      h('div', { class: 'filters' }, project, type, author),
      searchForm,
      h(
        'div',
        { class: 'account' },
        h('span', { id: 'live-status', class: 'live', 'data-state': 'connecting', text: t('connecting') }),
        h('span', { class: 'who', text: who }),
        review,
        spend,
        langButton,
        signout,
      ),
    ),
    // Filled from GET /api/observer/state when memory is paused, delayed or behind (main.ts loadMemoryState).
    h('p', { id: 'memory-notice', class: 'notice', role: 'status', hidden: '' }),
    h(
      'div',
      { class: 'layout' },
      h(
        'section',
        { class: 'feed-pane', 'aria-live': 'polite' },
        h(
          'div',
          { class: 'feed-head' },
          h('h2', { id: 'feed-title' }),
          h('span', { id: 'feed-count', class: 'count' }),
          h('button', { id: 'clear-search', class: 'ghost', type: 'button', text: t('clearSearch'), hidden: '' }),
        ),
        h('ul', { id: 'cards', class: 'cards' }),
        h('p', { id: 'feed-empty', class: 'empty', hidden: '' }),
        h('button', { id: 'more', class: 'secondary', type: 'button', text: t('loadMore'), hidden: '' }),
      ),
      h('aside', { id: 'detail', class: 'detail' }, h('p', { class: 'empty', text: t('pickItem') })),
    ),
  );
  return { project, type, author, q, searchForm, signout, spend, review };
}

/** What the filter lists show, and what is selected in each ('' = all). */
export interface FilterChoices {
  projects: Project[];
  types: Iterable<string>;
  authors: string[];
  project: string;
  type: string;
  author: string;
}

function option(value: string, label: string, selected: boolean): HTMLOptionElement {
  const o = h('option', { value, text: label });
  o.selected = selected;
  return o;
}

/** Refills the project, type and author lists built by mainLayout. */
export function fillFilterLists(t: Translate, lang: Lang, f: FilterChoices): void {
  const project = byId<HTMLSelectElement>('project');
  clear(project);
  project.append(option('', t('allProjects'), f.project === ''));
  for (const p of f.projects) {
    const label = `${p.key}${p.visibility === 'private' ? ` (${t('privateMark')})` : ''} · ${p.observations}`;
    project.append(option(p.key, label, p.key === f.project));
  }
  const type = byId<HTMLSelectElement>('type');
  clear(type);
  type.append(
    option('', t('allTypes'), f.type === ''),
    option('summary', typeLabel(lang, 'summary'), f.type === 'summary'),
  );
  for (const ty of f.types) type.append(option(ty, typeLabel(lang, ty), ty === f.type));
  const author = byId<HTMLSelectElement>('author');
  clear(author);
  author.append(option('', t('allAuthors'), f.author === ''));
  for (const a of f.authors) author.append(option(a, `@${a}`, a === f.author));
}
