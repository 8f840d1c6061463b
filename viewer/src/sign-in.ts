// The sign-in card: asks for a token, and keeps the form busy while the caller checks it.
import { inertText } from '#shared/inert';
import { h, on } from './dom';
import type { Key } from './i18n';

type Translate = (key: Key) => string;

/**
 * `check(token, remember)` resolves to null on success (the caller moves on) or to the message to show.
 * `footer` holds extra controls (the language switch).
 */
export function signInScreen(
  t: Translate,
  message: string,
  footer: HTMLElement,
  check: (token: string, remember: boolean) => Promise<string | null>,
): { main: HTMLElement; input: HTMLInputElement } {
  const input = h('input', {
    id: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: t('tokenPlaceholder'),
    required: '',
  });
  const remember = h('input', { id: 'remember', type: 'checkbox' });
  const error = h('p', { id: 'signin-error', class: 'error', role: 'alert', text: message });
  const submit = h('button', { class: 'primary', type: 'submit', text: t('signIn') });
  const form = h(
    'form',
    { class: 'signin-card', autocomplete: 'off' },
    h(
      'div',
      { class: 'brand big' },
      h('img', { src: '/viewer/icon.svg', alt: '', width: '36', height: '36' }),
      h('span', { text: 'cairn' }),
    ),
    h('p', { class: 'tagline', text: t('tagline') }),
    h('label', { for: 'token', text: t('tokenLabel') }),
    input,
    h('label', { class: 'check' }, remember, h('span', { text: t('remember') })),
    error,
    submit,
  );
  on(form, 'submit', (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) {
      error.textContent = t('tokenEmpty');
      return;
    }
    submit.disabled = true;
    submit.textContent = t('signingIn');
    void check(token, remember.checked).then((err) => {
      if (err === null) return;
      error.textContent = inertText(err);
      submit.disabled = false;
      submit.textContent = t('signIn');
    });
  });
  return { main: h('main', { class: 'signin' }, form, h('div', { class: 'signin-foot' }, footer)), input };
}
