// Where a team's digest may be posted (issue 36): an HTTPS URL in production; a plain-HTTP receiver on the loopback
// interface only under the local/test configuration (CAIRN_LOCAL=1: wrangler dev and the tests). A webhook URL is a
// credential (anyone holding a Slack webhook URL can post to its channel): the admin API and the audit log show its
// scheme and host only.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why `raw` cannot be the digest's webhook, or null when it can. Pure. */
export function webhookRefusal(raw: string, local: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  if (url.username || url.password) return 'a webhook URL carries no user name or password';
  if (url.protocol === 'https:') return LOOPBACK.has(url.hostname) && !local ? 'loopback is for local runs only' : null;
  if (url.protocol === 'http:' && local && LOOPBACK.has(url.hostname)) return null;
  return local ? 'use https://, or http:// on 127.0.0.1 for a local receiver' : 'use an https:// URL';
}

/** The URL as the admin API and the audit log show it: scheme and host, the rest hidden. */
export function maskedWebhook(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}/…`;
  } catch {
    return '…';
  }
}

/** Team settings with the webhook URL masked (every other key as it is). */
export function maskedSettings<T extends Record<string, unknown>>(settings: T): T {
  const url = settings.digest_webhook_url;
  return typeof url === 'string' ? { ...settings, digest_webhook_url: maskedWebhook(url) } : settings;
}
