// Pure wire helpers shared by the browser code and its tests: query strings and SSE frames.
export type Query = Record<string, string | string[] | undefined>;

export function withQuery(path: string, q: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === '') continue;
    for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  }
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}

/** One SSE frame → event name and parsed JSON data; comments (heartbeats) and junk give null. */
export function parseFrame(frame: string): { event: string; data: unknown } | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (!data.length) return null;
  try {
    return { event, data: JSON.parse(data.join('\n')) };
  } catch {
    return null;
  }
}
