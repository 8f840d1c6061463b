// Server-sent events framing (pure).
const encoder = new TextEncoder();

/** One event; JSON.stringify never emits raw newlines, so data fits on one `data:` line. */
export function sseEvent(event: string, data: unknown, retryMs?: number): Uint8Array {
  const retry = retryMs ? `retry: ${retryMs}\n` : '';
  return encoder.encode(`${retry}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const sseComment = (text: string): Uint8Array => encoder.encode(`: ${text}\n\n`);
