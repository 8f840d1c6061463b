// Fails on SQL that works locally but not against a remote D1 (`wrangler d1 migrations apply --remote`).
// Locally wrangler splits a file into statements itself and drops comments; remotely it sends the whole file
// in one request and D1 splits it on its own, which goes wrong on: quotes or semicolons inside comments
// (cloudflare/workers-sdk#4713, #3892), trigger bodies whose BEGIN/END are not upper case (wrangler's splitter
// only closes a body on an upper-case END; #10998), CRLF line endings in trigger bodies (#14991), a CASE … END
// inside a trigger body (the splitter ends the trigger at the CASE's END and D1 answers `incomplete input`: reported
// in SlopDotCash/slopdotcash PR #158; write iif(), coalesce() or a WHERE clause instead), and transaction
// statements (D1 runs each file in a transaction of its own and refuses BEGIN/COMMIT).
//   node scripts/lint-migrations.mjs [dir]      (run by `npm run db:check`; default dir: migrations/)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Statement keywords that open, close or name a transaction: D1 refuses them in a migration. */
const TRANSACTION_WORDS = new Set(['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE']);

/**
 * The file as tokens: words (outside strings, quoted names and comments), comments, `;`. One pass, linear.
 * Strings ('…' with '' inside), quoted names ("…", `…`, […]) are skipped whole.
 */
function tokens(text) {
  const out = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  const skipTo = (end, from) => {
    const j = text.indexOf(end, from);
    const stop = j === -1 ? n : j + end.length;
    for (let k = i; k < stop; k++) if (text[k] === '\n') line++;
    i = stop;
  };
  while (i < n) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? n : end;
      out.push({ kind: 'comment', text: text.slice(i + 2, stop), line });
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const start = line;
      const from = i;
      skipTo('*/', i + 2);
      out.push({ kind: 'comment', text: text.slice(from + 2, i - 2), line: start });
    } else if (c === "'" || c === '"' || c === '`') {
      // A doubled quote inside is an escaped one: scanning on from the closing quote finds the next part.
      skipTo(c, i + 1);
      while (text[i] === c) skipTo(c, i + 1);
    } else if (c === '[') {
      skipTo(']', i + 1);
    } else if (c === ';') {
      out.push({ kind: 'semicolon', line });
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(text[j])) j++;
      out.push({ kind: 'word', text: text.slice(i, j), line });
      i = j;
    } else {
      i++;
    }
  }
  return out;
}

/**
 * Problems of one migration file: `{line, rule, message}`, in file order. Rules: `crlf`, `comment-quote`,
 * `comment-semicolon`, `keyword-case` (begin/end not upper case), `trigger-case` (CASE … END in a trigger body),
 * `transaction`.
 */
export function lintMigrationSql(text) {
  const problems = [];
  const cr = text.indexOf('\r');
  if (cr !== -1) {
    problems.push({
      line: text.slice(0, cr).split('\n').length,
      rule: 'crlf',
      message: 'CR line endings: D1 mis-splits trigger bodies with them; save the file with LF only',
    });
  }
  let statementStart = true;
  let inTrigger = false;
  let depth = 0;
  let words = [];
  for (const t of tokens(text)) {
    if (t.kind === 'comment') {
      if (/['"`]/.test(t.text))
        problems.push({
          line: t.line,
          rule: 'comment-quote',
          message: 'a quote inside a comment: D1 reads it as the start of a string',
        });
      if (t.text.includes(';'))
        problems.push({
          line: t.line,
          rule: 'comment-semicolon',
          message: 'a semicolon inside a comment: D1 splits the statement there',
        });
      continue;
    }
    if (t.kind === 'semicolon') {
      if (depth === 0) {
        statementStart = true;
        inTrigger = false;
        words = [];
      }
      continue;
    }
    const upper = t.text.toUpperCase();
    if ((upper === 'BEGIN' || upper === 'END') && t.text !== upper) {
      problems.push({
        line: t.line,
        rule: 'keyword-case',
        message: `"${t.text}": write ${upper} in upper case (a lower-case END does not close a trigger body for the splitter)`,
      });
    }
    if (statementStart && TRANSACTION_WORDS.has(upper)) {
      problems.push({
        line: t.line,
        rule: 'transaction',
        message: `a ${upper} statement: D1 runs each migration in a transaction of its own and refuses transaction statements`,
      });
    }
    statementStart = false;
    words.push(upper);
    if (words.length <= 4 && upper === 'TRIGGER' && words[0] === 'CREATE') inTrigger = true;
    if (inTrigger && depth > 0 && upper === 'CASE') {
      problems.push({
        line: t.line,
        rule: 'trigger-case',
        message:
          'CASE … END inside a trigger body: a remote D1 ends the trigger at its END (incomplete input); use iif(), coalesce() or a WHERE clause',
      });
    }
    // The body's own END must still be found after it: CASE opens a level like BEGIN.
    if (inTrigger && (upper === 'BEGIN' || upper === 'CASE')) depth++;
    else if (inTrigger && upper === 'END' && depth > 0) depth--;
  }
  return problems;
}

/** Problems of every `.sql` file in `dir`, each with its file name. */
export function lintMigrationsDir(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .flatMap((file) => lintMigrationSql(readFileSync(path.join(dir, file), 'utf8')).map((p) => ({ file, ...p })));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(
    process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations'),
  );
  const problems = lintMigrationsDir(dir);
  for (const p of problems)
    console.error(`${path.join(path.relative(process.cwd(), dir), p.file)}:${p.line}: ${p.rule}: ${p.message}`);
  if (problems.length) {
    console.error(
      `${problems.length} problem(s) that would break \`wrangler d1 migrations apply --remote\` (see scripts/lint-migrations.mjs).`,
    );
    process.exit(1);
  }
  console.log('migrations are safe for remote D1');
}
