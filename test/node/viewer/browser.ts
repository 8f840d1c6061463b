// What the viewer's browser tests share: the dev server module, Chromium's flags, a page that records dialogs,
// errors and requested URLs, and the sign-in form.
import type { Browser, Page } from 'playwright-core';

export interface DevServer {
  url: string;
  stop(): Promise<void>;
}
export interface DevServerModule {
  startDevServer(opts: { port: number; persistTo: string; vars: Record<string, string> }): Promise<DevServer>;
  mintDevToken(url: string, secret: string, who?: { team?: string; user?: string; device?: string }): Promise<string>;
  freePort(): Promise<number>;
  ROOT: string;
}

export const loadDevServer = async (): Promise<DevServerModule> =>
  (await import(new URL('../../../scripts/dev-server.mjs', import.meta.url).href)) as DevServerModule;

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface Watch {
  dialogs: string[];
  errors: string[];
  urls: string[];
}

export async function openPage(
  browser: Browser,
  url: string,
  viewport = { width: 1366, height: 860 },
  locale = 'en-US',
): Promise<{ page: Page; watch: Watch }> {
  const context = await browser.newContext({ viewport, locale });
  const page = await context.newPage();
  const watch: Watch = { dialogs: [], errors: [], urls: [] };
  page.on('dialog', (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => watch.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/401|404/.test(m.text())) watch.errors.push(m.text());
  });
  page.on('request', (r) => watch.urls.push(r.url()));
  await page.goto(`${url}/`);
  return { page, watch };
}

export async function signIn(page: Page, value: string): Promise<void> {
  await page.fill('#token', value);
  await page.click('form.signin-card button[type=submit]');
}
