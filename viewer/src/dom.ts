// Tiny DOM builder: every piece of data becomes a Text node or an attribute value, never parsed HTML, and none
// carries a control or bidi character (src/shared/inert.ts): a right-to-left override in a stored title would
// otherwise reorder what the page shows.
import { inertText } from '#shared/inert';
export type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  [attr: string]: string | undefined;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined) continue;
    // Event handler attributes would turn data into code; handlers are attached with on() instead.
    if (/^on/i.test(k)) throw new Error(`refusing attribute ${k}`);
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = inertText(v);
    else el.setAttribute(k, inertText(v));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(
      typeof c === 'string' || typeof c === 'number' ? document.createTextNode(inertText(String(c))) : c,
    );
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function on<K extends keyof HTMLElementEventMap>(
  el: EventTarget,
  type: K,
  fn: (e: HTMLElementEventMap[K]) => void,
): void {
  el.addEventListener(type, fn as EventListener);
}

export const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
};
