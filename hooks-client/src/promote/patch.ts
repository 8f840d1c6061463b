// A unified diff of one file that `git apply` takes (pure): the changed lines with up to 3 lines of context, from
// the common head and tail of the two texts (no LCS: a promote changes one region, cairn's block, so one hunk is the
// whole change). Linear in the file's length. Lines keep their own line ends, so a CRLF file and a last line
// without a line end come out exactly (`\ No newline at end of file`).

const CONTEXT = 3;

/** `text`'s lines, each with its line end (the last may have none). */
const linesOf = (text: string): string[] => text.match(/[^\n]*\n|[^\n]+$/g) ?? [];

function emit(prefix: string, line: string): string {
  return line.endsWith('\n') ? `${prefix}${line}` : `${prefix}${line}\n\\ No newline at end of file\n`;
}

/** The patch that turns `before` (null: the file does not exist) into `after` at `path`; '' when they are equal. */
export function unifiedDiff(path: string, before: string | null, after: string): string {
  if (before === after) return '';
  const a = linesOf(before ?? '');
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, head - CONTEXT);
  const oldEnd = Math.min(a.length, a.length - tail + CONTEXT);
  const newEnd = b.length - (a.length - oldEnd);
  const oldLen = oldEnd - from;
  const newLen = newEnd - from;
  // A hunk with no old lines names the line it follows (0: the start of the file), as diff does.
  const range = (start: number, len: number) => `${len === 0 ? start : start + 1},${len}`;
  const out = [
    `diff --git a/${path} b/${path}\n`,
    ...(before === null ? ['new file mode 100644\n', '--- /dev/null\n'] : [`--- a/${path}\n`]),
    `+++ b/${path}\n`,
    `@@ -${range(from, oldLen)} +${range(from, newLen)} @@\n`,
  ];
  for (let i = from; i < head; i++) out.push(emit(' ', a[i]!));
  for (let i = head; i < a.length - tail; i++) out.push(emit('-', a[i]!));
  for (let i = head; i < b.length - tail; i++) out.push(emit('+', b[i]!));
  for (let i = a.length - tail; i < oldEnd; i++) out.push(emit(' ', a[i]!));
  return out.join('');
}
