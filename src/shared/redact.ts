// Secret redaction: pure text rules that replace credentials with [REDACTED:<kind>]. The ONE rule set: the hooks
// client runs it before anything is sent, the Worker again on every text that enters storage by any route
// (src/db/observations.ts, summaries, prompts, session buffer), so a client that skips it stores nothing verbatim.

/** Redactions made, by kind (never the value): the Worker counts them into the audit log. */
export type RedactionTally = Record<string, number>;

const count = (tally: RedactionTally | undefined, kind: string) => {
  if (tally) tally[kind] = (tally[kind] ?? 0) + 1;
};

/** True when a tally holds at least one redaction. */
export const tallied = (tally: RedactionTally): boolean => Object.keys(tally).length > 0;

interface Rule {
  kind: string;
  re: RegExp;
  /** Matches only text holding one of SECRET_WORDS (lets redact() skip it cheaply). */
  named?: boolean;
  /**
   * Every match contains one of these strings (case as written). Text holding none skips the rule without
   * running its regex: V8 compiles a regex on its first run, and a hook that sends ordinary output would
   * otherwise compile all of them (~1 ms) to find nothing.
   */
  hints?: readonly string[];
  /** Builds the replacement from the match; default: the whole match becomes the marker. */
  keep?: (m: RegExpExecArray | string[]) => string;
}

const mark = (kind: string) => `[REDACTED:${kind}]`;

/** Case-insensitive letters without the `i` flag, so the rest of the pattern can stay case-sensitive. */
const ci = (word: string) => word.replace(/[a-z]/g, (ch) => `[${ch}${ch.toUpperCase()}]`);

const SECRET_WORDS = [
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'secret',
  'token',
  'api[_-]?key',
  'apikey',
  'access[_-]?key',
  'auth[_-]?key',
  'private[_-]?key',
  'client[_-]?secret',
  'credentials?',
]
  .map(ci)
  .join('|');
// A key that names a secret: optional prefix (DB_, x-, github), the word, optional _suffix or CamelSuffix.
// Bounded, and anchored at the start of a word: an unbounded lazy prefix made long runs of letters quadratic.
const KEY = `(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,40}?(?:${SECRET_WORDS})(?:[_.-][A-Za-z0-9_]{0,40}|[A-Z][A-Za-z0-9]{0,40})?`;
// Every spelling SECRET_WORDS accepts contains one of these (case-insensitively).
const SECRET_WORD_HINT = /pass|pwd|secret|token|key|credential/i;
/** An object key (in structured tool input) that names a secret. */
export const SECRET_KEY_RE = new RegExp(`^${KEY}$`);

const PLAIN_IDENTIFIER = /^[A-Za-z_$][\w$.]*$/;
const NOT_A_VALUE = new Set([
  'null',
  'None',
  'nil',
  'undefined',
  'true',
  'false',
  'True',
  'False',
  'string',
  'number',
  'boolean',
  'any',
  'unknown',
  'str',
  'int',
  'bool',
  'bytes',
  'object',
  'Optional',
  'String',
  '~',
  'required',
  'optional',
]);

/** Mixed case and digits, as random base64 is; paths and identifiers of that length rarely are. */
function looksRandom(s: string): boolean {
  if (!/[A-Z]/.test(s) || !/[a-z]/.test(s) || !/[0-9]/.test(s)) return false;
  // A path made of words (`src/components/…`) has long lower-case runs between slashes.
  return !s.split('/').every((seg) => seg === '' || /^[A-Za-z][a-z]+[A-Za-z0-9]*$/.test(seg));
}

/**
 * `run` (letters, digits, `_`, `-`, `.`) with every JWT in it replaced, exactly where the pattern
 * `\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*` would match, in one pass over its
 * dot-separated segments: a JWT starts at the first `eyJ` of a segment that begins it or follows a `-` (a word
 * boundary), with at least 5 characters after it, the next segment is `eyJ` and at least 5 more, and a third
 * (the signature, possibly empty) follows. Each character is looked at a bounded number of times.
 */
export function jwtsIn(run: string): string {
  if (!run.includes('eyJ')) return run;
  const segs = run.split('.');
  const out: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const at = jwtStart(seg);
    const next = segs[i + 1];
    if (at >= 0 && seg.length - at >= 8 && i + 2 < segs.length && next!.length >= 8 && next!.startsWith('eyJ')) {
      out.push(`${seg.slice(0, at)}${mark('jwt')}`);
      i += 2; // the payload and the signature are part of it
    } else out.push(seg);
  }
  return out.join('.');
}

/** Where the first `eyJ` at a word boundary of `seg` (its start, or after a `-`) is, or -1. */
function jwtStart(seg: string): number {
  for (let at = seg.indexOf('eyJ'); at >= 0; at = seg.indexOf('eyJ', at + 1))
    if (at === 0 || seg[at - 1] === '-') return at;
  return -1;
}

const RULES: Rule[] = [
  // Private-key blocks, whole; an unterminated block (cut off) is redacted to the end of the text.
  {
    kind: 'private-key',
    hints: ['-----BEGIN'],
    re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$)/g,
  },
  {
    kind: 'url-password',
    hints: ['://'],
    re: /\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/)([^\s:@/"'<>]+):([^\s@/"'<>]+)@/g,
    keep: (m) => `${m[1]}${m[2]}:${mark('url-password')}@`,
  },
  {
    kind: 'aws-access-key',
    hints: ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AROA', 'AIPA', 'ANPA', 'ANVA', 'APKA'],
    re: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b/g,
  },
  {
    kind: 'github-token',
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    re: /\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})/g,
  },
  {
    kind: 'gitlab-token',
    hints: ['glpat-', 'glptt-', 'gldt-', 'glrt-', 'glcbt-', 'glsoat-', 'glffct-', 'glimt-', 'glagent-', 'gloas-'],
    re: /\bgl(?:pat|ptt|dt|rt|cbt|soat|ffct|imt|agent|oas)-[A-Za-z0-9_-]{20,}/g,
  },
  { kind: 'slack-token', hints: ['xox'], re: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g },
  {
    kind: 'slack-webhook',
    hints: ['hooks.slack.com/'],
    re: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/g,
  },
  {
    kind: 'stripe-key',
    hints: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'whsec_'],
    re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{20,}/g,
  },
  { kind: 'anthropic-key', hints: ['sk-ant-'], re: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  // The digit lookahead is bounded: unbounded, it rescanned the whole run from every `sk-` of `sk-sk-sk-…`.
  {
    kind: 'openai-key',
    hints: ['sk-'],
    re: /\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]{0,64}\d)[A-Za-z0-9_-]{20,}/g,
  },
  { kind: 'google-api-key', hints: ['AIza'], re: /\bAIza[0-9A-Za-z_-]{35}/g },
  {
    kind: 'google-oauth',
    hints: ['GOCSPX-', 'ya29.'],
    re: /\b(?:GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[0-9A-Za-z_-]{20,})/g,
  },
  { kind: 'npm-token', hints: ['npm_'], re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: 'huggingface-token', hints: ['hf_'], re: /\bhf_[A-Za-z0-9]{30,}\b/g },
  // JWTs are found inside each run of token characters by a scan (jwtsIn), not by a pattern: the pattern
  // \beyJ[..]{5,}\.eyJ[..]{5,}\.[..]* rescanned a run from every `eyJ` in it (`eyJ-eyJ-…`: quadratic, 3.5 s at 64k).
  { kind: 'jwt', hints: ['eyJ'], re: /[A-Za-z0-9_.-]+/g, keep: (m) => jwtsIn(m[0]!) },
  // cairn's own tokens (src/lib/crypto.ts newToken: `cairn_` + 40 letters and digits).
  { kind: 'cairn-token', hints: ['cairn_'], re: /\bcairn_[A-Za-z0-9]{32,64}\b/g },
  { kind: 'sendgrid-key', hints: ['SG.'], re: /\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}/g },
  // Azure storage / service bus connection strings: `AccountKey=<base64>;`, `SharedAccessKey=<base64>`.
  {
    kind: 'azure-key',
    hints: ['AccountKey=', 'SharedAccessKey=', 'accountkey=', 'sharedaccesskey='],
    re: /\b((?:[Aa]ccount[Kk]ey|[Ss]hared[Aa]ccess[Kk]ey)=)([^;\s"'`]{8,})/g,
    keep: (m) => `${m[1]}${mark('azure-key')}`,
  },
  // `mysql -u root -pS3cret` (the password glued to -p) and `docker login -u me -p S3cret`, same line only.
  {
    kind: 'cli-password',
    hints: ['mysql', 'mariadb'],
    re: /(\b(?:mysql(?:dump|admin|import|show|check)?|mariadb(?:-dump)?)\b[^\n]{0,300}?\s-p)([^\s"'`-][^\s"'`]*|"[^"\n]{1,300}"|'[^'\n]{1,300}')/g,
    keep: (m) => `${m[1]}${mark('cli-password')}`,
  },
  {
    kind: 'cli-password',
    hints: ['docker', 'podman', 'helm'],
    re: /(\b(?:docker|podman|helm(?:\s+registry)?)\s+login\b[^\n]{0,300}?\s(?:-p|--password)(?:=|\s+))(?!\[REDACTED)([^\s"'`-][^\s"'`]*|"[^"\n]{1,300}"|'[^'\n]{1,300}')/g,
    keep: (m) => `${m[1]}${mark('cli-password')}`,
  },
  {
    kind: 'auth-header',
    hints: ['Bearer', 'Basic', 'Token'],
    re: /\b((?:Bearer|Basic|Token)\s+)([A-Za-z0-9._~+/-]{12,}=*)/g,
    keep: (m) => `${m[1]}${mark('auth-header')}`,
  },
  // KEY = "value" / "KEY": "value" / KEY: 'value' (a comparison `==` is not an assignment). A quote before
  // the key must close right after it: `"Password: "` is prose in a string, not a key.
  {
    kind: 'assignment',
    named: true,
    re: new RegExp(
      `((?:(["'])${KEY}\\2|(?<![\\w"'$.-])${KEY})\\s*(?:=(?![=>~])|:(?!:))\\s*)(["'\`])((?:(?!\\3)[^\\\\\\n]|\\\\.){1,2000})\\3`,
      'g',
    ),
    keep: (m) => `${m[1]}${m[3]}${mark('assignment')}${m[3]}`,
  },
  // --password hunter2 / --token=abc on command lines.
  {
    kind: 'cli-flag',
    named: true,
    re: new RegExp(`(--?(?:${SECRET_WORDS})[=\\s]+)(?!\\[REDACTED)([^\\s"'\`]+)`, 'g'),
    keep: (m) => `${m[1]}${mark('cli-flag')}`,
  }, // A bare AWS secret access key: exactly 40 base64 characters standing alone, with upper and lower case
  // letters and a digit (so a hex git sha or a word run is not taken for one). Runs on all text: a fixed
  // length class, so at most 40 steps per position.
  {
    kind: 'aws-secret-key',
    re: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    keep: (m) => (looksRandom(m[0]!) ? mark('aws-secret-key') : m[0]!),
  },
];

// KEY=value without quotes: env files, shell, query strings, connection strings (Password=x;).
const UNQUOTED_ASSIGNMENT = new RegExp(`(${KEY})(\\s*)=(?![=>~])(\\s*)([^\\s'"\`;,&(){}\\[\\]<>]+)([(.[]?)`, 'g');
// YAML-style `password: hunter2` on its own line. Only spaces and tabs around the key: `\\s*` after `^` in
// multiline mode also eats newlines, which made a key followed by 32k blank lines quadratic (22 s).
const YAML_PAIR = new RegExp(
  `^([ \\t]*(?:-[ \\t]+)?["']?${KEY}["']?[ \\t]*:[ \\t]+)([^\\s#;,{}\\[\\]&*|>'"\`][^\\s#;,]*)[ \\t]*$`,
  'gm',
);
// The rest of a private key whose BEGIN line was cut away (the tail of a truncated field).
const ORPHAN_KEY_END = /^[\s\S]*?-----END ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/;

/** Replaces every secret found in `text`; ordinary code and prose come back unchanged. */
export function redact(text: string, tally?: RedactionTally): string {
  if (text.length < 8) return text;
  let out = text;
  if (!out.includes('-----BEGIN') && out.includes('-----END')) {
    out = out.replace(ORPHAN_KEY_END, () => {
      count(tally, 'private-key');
      return mark('private-key');
    });
  }
  // Rules built on a secret-naming key cost the most to compile and run; text naming no such word skips them.
  const named = SECRET_WORD_HINT.test(out);
  for (const rule of RULES) {
    if (rule.named && !named) continue;
    if (rule.hints && !rule.hints.some((h) => out.includes(h))) continue;
    rule.re.lastIndex = 0;
    if (!rule.re.test(out)) continue;
    rule.re.lastIndex = 0;
    out = out.replace(rule.re, (...args: unknown[]) => {
      const groups = args.slice(0, -2).filter((a) => typeof a === 'string' || a === undefined) as string[];
      const replaced = rule.keep ? rule.keep(groups) : mark(rule.kind);
      if (replaced !== groups[0]) count(tally, rule.kind);
      return replaced;
    });
  }
  if (!named) return out;
  out = out.replace(
    UNQUOTED_ASSIGNMENT,
    (whole, key: string, sp1: string, sp2: string, value: string, next: string) => {
      if (next || value.startsWith('[REDACTED') || value.startsWith('$') || NOT_A_VALUE.has(value)) return whole;
      // `token = userToken` or `secretCount = 0` in code (spaces around `=`) is not a secret; `TOKEN=abc` in a
      // shell is. With spaces, only a long literal that is neither an identifier nor a number counts.
      if ((sp1 || sp2) && (PLAIN_IDENTIFIER.test(value) || value.length < 8 || /^[\d.]+$/.test(value))) return whole;
      count(tally, 'assignment');
      return `${key}${sp1}=${sp2}${mark('assignment')}`;
    },
  );
  out = out.replace(YAML_PAIR, (whole, prefix: string, value: string) => {
    if (NOT_A_VALUE.has(value) || value.startsWith('[REDACTED') || value.startsWith('$')) return whole;
    count(tally, 'assignment');
    return `${prefix}${mark('assignment')}`;
  });
  return out;
}

/** Redacts every string of a JSON-like value; a string under a secret-named key is replaced whole. */
export function redactValue(value: unknown, leaf: (s: string) => string = redact, depth = 0): unknown {
  if (typeof value === 'string') return leaf(value);
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, leaf, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const secretField =
      typeof v === 'string' &&
      v.trim() !== '' &&
      SECRET_WORD_HINT.test(k) &&
      SECRET_KEY_RE.test(k) &&
      !NOT_A_VALUE.has(v) &&
      !/^\$\{.*\}$/.test(v);
    out[k] = secretField ? mark('field') : redactValue(v, leaf, depth + 1);
  }
  return out;
}
