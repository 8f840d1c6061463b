// The viewer's HTML shell and the security headers every viewer response carries (pure).
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/** The page has no inline script or style: everything the CSP allows comes from /viewer/*. */
export function shellHtml(version: string): string {
  const v = encodeURIComponent(version);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>cairn</title>
<link rel="icon" href="/viewer/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/viewer/app.${v}.css">
<script src="/viewer/app.${v}.js" defer></script>
</head>
<body>
<div id="app"><noscript>The cairn viewer needs JavaScript. / cairn 查看器需要启用 JavaScript。</noscript></div>
</body>
</html>
`;
}
