// REALTALK (Lee et al., 2025): 10 real 21-day messaging-app conversations between people, with memory-probing
// questions whose `evidence` lists the message ids (dia_id) that answer them. Read at run time from a snapshot
// of github.com/danny911kr/REALTALK (CAIRN_BENCH_REALTALK=<its git dir>); never committed here.
// Only the top-level data/Chat_*.json files are read: that repository also carries a split copy of LoCoMo under
// data/locomo/, which is held out from this project and must never be read.
import { git, snapshotDir } from './snapshot.mjs';

export const ENV = 'CAIRN_BENCH_REALTALK';

/** "29.12.2023, 22:42:04" → epoch ms (UTC). */
function parseDate(s) {
  const m = /^(\d{2})\.(\d{2})\.(\d{4}),\s*(\d{2}):(\d{2}):(\d{2})$/.exec(String(s ?? '').trim());
  return m ? Date.UTC(+m[3], +m[2] - 1, +m[1], +m[4], +m[5], +m[6]) : null;
}

export function load() {
  const { dir, why } = snapshotDir(ENV);
  if (!dir) return { skipped: why };
  const files = git(dir, ['ls-tree', '--name-only', 'HEAD', 'data/'])
    .split('\n')
    .filter((f) => /^data\/Chat_[^/]+\.json$/.test(f));
  if (files.length === 0) return { skipped: `${ENV} has no data/Chat_*.json` };
  const projects = [];
  const queries = [];
  for (const file of files) {
    const chat = JSON.parse(git(dir, ['show', `HEAD:${file}`]));
    const project = `realtalk/${file.slice('data/'.length, -'.json'.length)}`;
    const observations = [];
    const seen = new Set();
    let last = Date.UTC(2023, 0, 1);
    const sessions = Object.keys(chat)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
    for (const s of sessions) {
      for (const turn of chat[s]) {
        const text = String(turn.clean_text ?? '').trim();
        if (!text || seen.has(turn.dia_id)) continue;
        seen.add(turn.dia_id);
        last = Math.max(last + 1, parseDate(turn.date_time) ?? last + 1);
        observations.push({ key: `${project}#${turn.dia_id}`, text: `${turn.speaker}: ${text}`, created_at: last });
      }
    }
    projects.push({ key: project, observations });
    for (const qa of chat.qa ?? []) {
      const expected = (qa.evidence ?? []).filter((e) => seen.has(e)).map((e) => `${project}#${e}`);
      if (expected.length && qa.question)
        queries.push({ q: qa.question, project, expected, kind: `category ${qa.category}` });
    }
  }
  return { projects, queries };
}
