// The redaction corpus: every secret kind, planted in prompts, tool inputs, outputs and messages, never
// reaches the server; ordinary code passes through unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtsIn, redact, redactValue } from '#shared/redact';
import { redactAndCut, scrubPayload, scrubText } from '../../src/privacy/scrub';
import { run } from '../../src/run';
import { FIELD_MAX_CHARS } from '#shared/truncate';
import { withBacktrackBudget } from '../backtrack-budget';
import { fakeServer, hookJson, machine, memIo, type FakeServer } from '../support';

// Built from pieces so that secret scanners do not flag this file; each `needle` must never be sent.
const j = (...parts: string[]) => parts.join('');
export const SECRETS: Array<{ kind: string; text: string; needle: string }> = [
  {
    kind: 'aws access key',
    text: j('aws_access_key_id = AKIA', 'Z7QW3XKJ4PLM2NBV'),
    needle: j('AKIA', 'Z7QW3XKJ4PLM2NBV'),
  },
  {
    kind: 'aws secret key',
    text: j('aws_secret_access_key=', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY'),
    needle: j('wJalrXUtnFEMI/K7MDENG', '/bPxRfiCYzEXAMPLEKEY'),
  },
  {
    kind: 'github classic token',
    text: j('git push https://github.com with ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'),
    needle: j('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'),
  },
  {
    kind: 'github fine-grained token',
    text: j('GH=github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz012345'),
    needle: j('github_pat_', '11ABCDEFG0123456789_abcdefghij'),
  },
  {
    kind: 'gitlab token',
    text: j('curl -H "PRIVATE-TOKEN: glpat-', 'xR4nD0mT0k3nV4lu3Zz9" https://gitlab.example/api/v4'),
    needle: j('glpat-', 'xR4nD0mT0k3nV4lu3Zz9'),
  },
  {
    kind: 'slack bot token',
    text: j('slack token xoxb-', '1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx'),
    needle: j('xoxb-', '1234567890-0987654321'),
  },
  {
    kind: 'slack webhook',
    text: j('post to https://hooks.slack.com/services/', 'T0000AAAA/B0000BBBB/XXXXXXXXXXXXXXXXXXXXXXXX'),
    needle: j('T0000AAAA/B0000BBBB', '/XXXXXXXXXXXXXXXX'),
  },
  {
    kind: 'stripe secret key',
    text: j('Stripe::Client.new(sk_live_', '4eC39HqLyjWDarjtT1zdp7dc)'),
    needle: j('sk_live_', '4eC39HqLyjWDarjtT1zdp7dc'),
  },
  {
    kind: 'stripe restricted key',
    text: j('key rk_test_', '51HxYzAbCdEfGhIjKlMnOpQr'),
    needle: j('rk_test_', '51HxYzAbCdEfGhIjKlMnOpQr'),
  },
  {
    kind: 'openai key',
    text: j('OpenAI(api_key=os.environ.get("X", "sk-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"))'),
    needle: j('sk-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'),
  },
  {
    kind: 'anthropic key',
    text: j('export KEY_FOR_CLAUDE=sk-ant-api03-', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-DcBa_98765'),
    needle: j('sk-ant-api03-', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3'),
  },
  {
    kind: 'google api key',
    text: j('maps?key=AIza', 'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q&q=x'),
    needle: j('AIza', 'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'),
  },
  {
    kind: 'jwt',
    text: j(
      'cookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
      '.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ',
      '.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    ),
    needle: j('eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ', ''),
  },
  {
    kind: 'rsa private key block',
    text: j(
      'here is the key:\n-----BEGIN RSA ',
      'PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bqQ9xZkP1vR2mN8LcT4uHsW0yYdFgJ3aE6iB5oK\nq9PzXr7VtL2sN4mW8yC1dF6gH3jK0lZ5xB9nQ2vR7tY4uI1oP3aS6dF8gH0jK2\n-----END RSA ',
      'PRIVATE KEY-----\nthat was it',
    ),
    needle: 'MIIEowIBAAKCAQEA7bqQ9xZkP1vR2mN8LcT4uHsW0yYdFgJ3aE6iB5oK',
  },
  {
    kind: 'openssh private key block',
    text: j(
      '-----BEGIN OPENSSH ',
      'PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n-----END OPENSSH ',
      'PRIVATE KEY-----',
    ),
    needle: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ',
  },
  {
    kind: 'password in url',
    text: j('DATABASE_URL=postgres://admin:', 'S3cr3tP4ssw0rd', '@db.internal:5432/app'),
    needle: 'S3cr3tP4ssw0rd',
  },
  {
    kind: 'password in git url',
    text: j('git clone https://deploy:', 'hunter2pass9', '@git.example.com/team/repo.git'),
    needle: 'hunter2pass9',
  },
  {
    kind: 'connection string',
    text: j('Server=db;User Id=sa;Password=', 'Sup3rS3cretConn', ';Encrypt=true'),
    needle: 'Sup3rS3cretConn',
  },
  {
    kind: 'password= assignment',
    text: j('mysql -u root password=', 'plainpass123', ' --host db'),
    needle: 'plainpass123',
  },
  { kind: 'secret: quoted', text: j('config = { secret: "', 'mysecretvalue77', '" }'), needle: 'mysecretvalue77' },
  { kind: 'token = quoted', text: j("token = '", 'tok_abcdef123456', "'"), needle: 'tok_abcdef123456' },
  { kind: 'env file line', text: j('DB_PASSWORD=', 'correcthorsebattery', '\nDEBUG=1'), needle: 'correcthorsebattery' },
  {
    kind: 'json api_key',
    text: j('{"api_key": "', 'k-9f8e7d6c5b4a3210', '", "region": "eu"}'),
    needle: 'k-9f8e7d6c5b4a3210',
  },
  {
    kind: 'yaml password',
    text: j('database:\n  user: app\n  password: ', 'yamlsecret9', '\n'),
    needle: 'yamlsecret9',
  },
  { kind: 'cli flag', text: j('deploy --token ', 'clitoken8765x', ' --prod'), needle: 'clitoken8765x' },
  {
    kind: 'bare cairn token',
    text: j('CAIRN_TOKEN is cairn_', 'Q7w9ErT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9bN2mQ'),
    needle: j('cairn_', 'Q7w9ErT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9bN2mQ'),
  },
  {
    kind: 'cairn token in a login command',
    text: j('cairn login --url http://127.0.0.1:8787 cairn_', 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d'),
    needle: j('aB3dE5fG7hJ9kL1', 'mN3pQ5rS7tU9vW1xY3zA5bC7d'),
  },
  // AWS secret access keys are exactly 40 characters.
  {
    kind: 'bare aws secret key',
    text: j('the value is ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', ' for prod'),
    needle: j('K7MDENG', '/bPxRfiCYEXAMPLEKEY'),
  },
  {
    kind: 'azure AccountKey',
    text: j(
      'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=',
      'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg==',
      ';EndpointSuffix=core.windows.net',
    ),
    needle: j('Zm9vYmFyYmF6cXV4', 'MTIzNDU2Nzg5MGFiY2RlZg'),
  },
  { kind: 'mysql -p<pw>', text: j('mysql -h db -u root -p', 'MyS3cretPw', ' appdb < dump.sql'), needle: 'MyS3cretPw' },
  {
    kind: 'docker login -p <pw>',
    text: j('docker login -u deploy -p ', 'D0ckerHubPw99', ' registry.example.com'),
    needle: 'D0ckerHubPw99',
  },
  {
    kind: 'sendgrid key',
    text: j('SENDGRID=SG.', 'ngeVfQFYQlKU0ufo8x5d1A', '.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr'),
    needle: j('ngeVfQFYQlKU0ufo8x5d1A', '.TwL2iGABf9DHoTf'),
  },
  {
    kind: 'bearer header',
    text: j('curl -H "Authorization: Bearer ', 'opaqueBearerValue1234567', '" https://api'),
    needle: 'opaqueBearerValue1234567',
  },
];

const ORDINARY_CODE = [
  'const token = getToken();',
  "if (password === '') throw new Error('empty password');",
  'function hashPassword(password: string): string {\n  return hash(password);\n}',
  'interface Creds {\n  token: string;\n  password?: string;\n}',
  'const tokenizer = new Tokenizer({ maxTokens: 512 });',
  'let secretCount = 0;\nsecretCount += 1;',
  'password = input("Password: ")\nprint("ok")',
  'const apiKey = process.env.API_KEY;',
  'headers: { Authorization: `Bearer ${token}` },',
  'export GITHUB_TOKEN=$(gh auth token)',
  'if (password == "") { return; }',
  'def login(username, password=None):\n    return check(username, password)',
  '  "tokenizer": "^1.2.0",\n  "max_tokens": 1024',
  'docker login --password-stdin < file',
  'git commit -m "fix token refresh when the secret rotates"',
  'const secretKey = crypto.randomBytes(32);',
  'task-list-item-0123456789-abcdefghij',
  'SELECT * FROM users WHERE id = ? AND email = ?',
  'C:\\Users\\me\\proj\\src\\auth\\token.ts',
  'commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)',
  'import x from "packages/components/SettingsPanel/index"',
  'mysql -u root -p appdb',
  'docker login --password-stdin registry.example.com',
  'SELECT name FROM cairn_projects WHERE id = 1',
];

describe('redact (pure)', () => {
  for (const s of SECRETS) {
    it(`removes a ${s.kind}`, () => {
      const out = redact(s.text);
      expect(out).not.toContain(s.needle);
      expect(out).toContain('[REDACTED:');
    });
  }

  for (const code of ORDINARY_CODE) {
    it(`leaves ordinary code intact: ${JSON.stringify(code.slice(0, 40))}`, () => {
      expect(redact(code)).toBe(code);
    });
  }

  it('replaces a string under a secret-named key in structured input', () => {
    const out = redactValue({ env: { API_TOKEN: 'structuredsecret42', DEBUG: 'true' }, command: 'run' }) as {
      env: Record<string, string>;
    };
    expect(out.env.API_TOKEN).toBe('[REDACTED:field]');
    expect(out.env.DEBUG).toBe('true');
  });

  it('redacts a private key that straddles the cut of a 1 MB field', () => {
    const key = SECRETS.find((s) => s.kind === 'rsa private key block')!;
    const filler = 'x'.repeat(9_000);
    const huge = `${filler}${key.text}${'y'.repeat(1_000_000)}${key.text}${filler.slice(0, 3_000)}`;
    const out = redactAndCut(huge);
    expect(out.length).toBeLessThan(16_100);
    expect(out).not.toContain(key.needle);
    expect(out).not.toContain('MIIE');
  });

  it('cuts a 1 MB value to head 60% and tail 30% of 16,000 chars around an elided marker', () => {
    const text = `${'a'.repeat(500_000)}${'b'.repeat(500_000)}`;
    const out = scrubPayload({ old_string: text }) as { old_string: string };
    expect(out.old_string.startsWith('a'.repeat(9_600))).toBe(true);
    expect(out.old_string.endsWith('b'.repeat(4_800))).toBe(true);
    // The server's own marker (src/shared/truncate.ts), so both sides cut alike.
    expect(out.old_string).toContain('<elided chars="985600" original_size_chars="1000000" reason="oversize"/>');
    expect(out.old_string.length).toBeLessThanOrEqual(16_000);
  });
});

describe('redaction on hostile text (linear patterns)', () => {
  // Each of these took seconds or more with a backtracking pattern (issue 14, row 14: 22 s on the first).
  // Work is counted, not timed: V8's backtrack counter (see backtrack-budget.ts). Today's worst rule needs ~100
  // backtracks per character on these texts, the same at 32k and at 128k characters; a quadratic pattern
  // needs thousands per character at 32k and four times more at 128k.
  const PER_CHAR = 256;
  const fill = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const HOSTILE: Array<[string, string]> = [
    ['password followed by 32k newlines', `password${'\n'.repeat(32_000)}`],
    ['password: followed by 32k spaces', `password:${' '.repeat(32_000)}`],
    ['sk- repeated without a digit', fill('sk-', 32_000)],
    ['password=" repeated', fill('password="', 32_000)],
    ['mysql repeated on one line', fill('mysql ', 32_000)],
    ['docker login repeated on one line', fill('docker login ', 32_000)],
    ['base64 run', fill('A1b/', 32_000)],
    ['a:// with colons', `x://${fill('b:', 32_000)}`],
  ];
  const secret = SECRETS.find((s) => s.kind === 'yaml password')!;

  it('stops the patterns that were quadratic before, so the budget below can fail', () => {
    const yaml = withBacktrackBudget(PER_CHAR, () => /^\s*password\s*:/m.test(`password${'\n'.repeat(32_000)}x`));
    const digitAhead = withBacktrackBudget(PER_CHAR, () =>
      /\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}/g.test(fill('sk-', 32_000)),
    );
    expect(yaml.over).toHaveLength(1);
    expect(digitAhead.over).toHaveLength(1);
  });

  it('redacts each hostile text of 32k and of 128k characters with every regex run inside a fixed budget per character', () => {
    for (const [name, text] of HOSTILE) {
      for (const input of [`${secret.text}\n${text}`, `${secret.text}\n${text.repeat(4)}`]) {
        const run = withBacktrackBudget(PER_CHAR, () => redact(input));
        expect(run.over, `${name} (${input.length} chars)`).toEqual([]);
        expect(run.probed, name).toBeGreaterThan(0);
        expect(run.result, name).toBe(redact(input));
        expect(run.result, name).not.toContain(secret.needle);
      }
    }
  });

  it('redacts ten fields of each hostile kind inside the budget and keeps their secrets out', () => {
    for (const [name, text] of HOSTILE) {
      const payload = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, `${secret.text}${text}`]));
      const run = withBacktrackBudget(PER_CHAR, () => JSON.stringify(scrubPayload(payload)));
      expect(run.over, name).toEqual([]);
      expect(run.result, name).not.toContain(secret.needle);
    }
  });

  it('cleans a bounded slice of a 10 MB prompt of each hostile kind (10× the server body limit), whatever its size', () => {
    for (const [name, text] of HOSTILE) {
      const huge = text.repeat(Math.ceil(10_000_000 / text.length)).slice(0, 10_000_000);
      // Bounded before it runs: the cleaning step is handed the head and tail the cut keeps (plus a margin), never the rest.
      let handed = 0;
      redactAndCut(huge, FIELD_MAX_CHARS, (s) => {
        handed += s.length;
        return s;
      });
      expect(handed, name).toBeLessThanOrEqual(2 * FIELD_MAX_CHARS);
      const run = withBacktrackBudget(PER_CHAR, () => scrubText(huge));
      expect(run.result?.length, name).toBeLessThanOrEqual(FIELD_MAX_CHARS);
      expect(run.longest, name).toBeLessThanOrEqual(2 * FIELD_MAX_CHARS);
      expect(run.over, name).toEqual([]);
    }
  });
});

describe('the JWT scan', () => {
  // The pattern it replaces: same matches, but it rescanned a run of token characters from every `eyJ` in it.
  const PATTERN = /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
  const byPattern = (t: string) => t.replace(PATTERN, '[REDACTED:jwt]');
  const byScan = (t: string) => t.replace(/[A-Za-z0-9_.-]+/g, (run) => jwtsIn(run));

  it('replaces exactly what the pattern replaced, on 3,000 random texts built from JWT parts', () => {
    let seed = 27;
    const rand = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    const pieces = [
      'eyJ',
      'eyJhbGci',
      'abcde',
      '.',
      '-',
      '_',
      ' ',
      'x',
      '=',
      'eyJ.',
      '..',
      'Z9',
      'eyJabcde.',
      'eyJabcde.eyJvwxyz.s',
    ];
    let redacted = 0;
    for (let k = 0; k < 3_000; k++) {
      const text = Array.from({ length: 1 + rand(30) }, () => pieces[rand(pieces.length)]).join('');
      expect(byScan(text), JSON.stringify(text)).toBe(byPattern(text));
      if (byPattern(text) !== text) redacted++;
    }
    expect(redacted).toBeGreaterThan(100); // the texts did hold JWTs
  });

  it('does a bounded amount of regex work per character on 100k and 400k characters of hostile text, where the pattern did not', () => {
    const fill = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
    const hostile = [
      fill('eyJ-', 100_000),
      `eyJ${fill('a', 100_000)}`,
      fill('eyJaaaaa.', 100_000),
      fill('eyJaaaaaa.eyJ', 100_000),
      fill('-eyJ_', 100_000),
    ];
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl';
    // The same budget stops the pattern on the first of them: the test can fail.
    expect(withBacktrackBudget(256, () => byPattern(hostile[0]!)).over).toHaveLength(1);
    for (const text of hostile) {
      for (const input of [`${text} ${jwt}`, `${text.repeat(4)} ${jwt}`]) {
        const run = withBacktrackBudget(256, () => redact(input));
        expect(run.over, `${text.slice(0, 12)} (${input.length} chars)`).toEqual([]);
        expect(run.probed).toBeGreaterThan(0);
        expect(run.result).not.toContain('eyJzdWIiOiIxMjM0In0');
      }
    }
  });

  it('looks at each character of a run a bounded number of times (String.prototype.indexOf calls counted)', () => {
    const calls = { n: 0 };
    const indexOf = String.prototype.indexOf;
    String.prototype.indexOf = function (this: string, ...args: Parameters<string['indexOf']>) {
      calls.n++;
      return indexOf.apply(this, args);
    };
    try {
      const counts = [25_000, 100_000].map((n) => {
        calls.n = 0;
        jwtsIn('xeyJ'.repeat(n / 4));
        return calls.n;
      });
      // One indexOf per `eyJ` (each continues where the last stopped): 4× the text, 4× the calls, not 16×.
      expect(counts[1]).toBeLessThanOrEqual(4 * counts[0]! + 4);
    } finally {
      String.prototype.indexOf = indexOf;
    }
  });
});

describe('nothing secret crosses the network', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await fakeServer();
  });
  afterAll(() => server.close());

  it('sends none of the corpus in any request, whichever hook and field carries it', async () => {
    const { env } = machine(server.url);
    const all = SECRETS.map((s) => s.text).join('\n');
    const events: Array<[string, Record<string, unknown>]> = [
      ['user-prompt-submit', { prompt: `please use these:\n${all}` }],
      [
        'post-tool-use',
        {
          tool_name: 'Bash',
          tool_input: { command: all },
          tool_response: { stdout: all, stderr: '', interrupted: false, isImage: false },
          tool_use_id: 'r1',
        },
      ],
      [
        'post-tool-use',
        { tool_name: 'mcp__db__query', tool_input: { sql: 'select 1' }, tool_response: all, tool_use_id: 'r2' },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'mcp__x__list',
          tool_input: { q: 'x' },
          tool_response: [{ type: 'text', text: all }],
          tool_use_id: 'r3',
        },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'Write',
          tool_input: { file_path: '/repo/config/settings.py', content: all },
          tool_response: { filePath: '/repo/config/settings.py', success: true },
          tool_use_id: 'r4',
        },
      ],
      [
        'post-tool-use',
        {
          tool_name: 'Read',
          tool_input: { file_path: '/repo/.env.production' },
          tool_response: { file: { content: 'PLAIN=notasecretbyname_but_in_env_file' } },
          tool_use_id: 'r5',
        },
      ],
      ['stop', { last_assistant_message: `Done. I used ${all}` }],
    ];
    for (const [event, fields] of events) {
      const io = memIo({ env, stdin: hookJson(fields) });
      expect(await run(['hook', event], io)).toBe(0);
    }
    const bodies = server.requests.map((r) => r.body).join('\n');
    expect(server.requests.length).toBe(events.length);
    for (const s of SECRETS) expect(bodies, s.kind).not.toContain(s.needle);
    expect(bodies).not.toContain('notasecretbyname_but_in_env_file');
    expect(bodies).toContain('.env.production');
    expect(bodies).toContain('please use these');
  });
});
