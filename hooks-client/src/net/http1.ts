// Pure: parses an HTTP/1.1 response from the bytes received so far (status, headers, length or chunked body).

export interface HttpResult {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface ParseOptions {
  /** The server closed the connection: a body without length ends here. */
  ended: boolean;
  /** Longest body kept; once this much has arrived the answer counts as complete (the rest is dropped). */
  maxBytes: number;
  /** The request was HEAD: no body follows whatever the headers say. */
  head?: boolean;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** The response, or 'incomplete' (wait for more bytes), or 'malformed'. */
export function parseResponse(buf: Buffer, opts: ParseOptions): HttpResult | 'incomplete' | 'malformed' {
  let start = 0;
  for (;;) {
    const end = buf.indexOf(CRLF2, start);
    if (end === -1) return 'incomplete';
    const lines = buf.subarray(start, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (!m) return 'malformed';
    const status = Number(m[1]);
    const headers: HttpResult['headers'] = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) return 'malformed';
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const prev = headers[name];
      headers[name] =
        prev === undefined
          ? value
          : name === 'set-cookie'
            ? [...(Array.isArray(prev) ? prev : [prev]), value]
            : `${String(prev)}, ${value}`;
    }
    const bodyStart = end + 4;
    // 1xx interim answers (100 Continue) are followed by the real one.
    if (status >= 100 && status < 200) {
      start = bodyStart;
      continue;
    }
    const rest = buf.subarray(bodyStart);
    if (opts.head || status === 204 || status === 304) return { status, headers, text: '' };
    const te = String(headers['transfer-encoding'] ?? '').toLowerCase();
    if (te.includes('chunked')) {
      const body = dechunk(rest, opts.maxBytes);
      if (body === 'malformed') return body;
      if (body === 'incomplete') return 'incomplete';
      return { status, headers, text: body.toString('utf8') };
    }
    const cl = headers['content-length'];
    if (cl !== undefined) {
      const n = Number(cl);
      if (!Number.isSafeInteger(n) || n < 0) return 'malformed';
      const want = Math.min(n, opts.maxBytes);
      if (rest.length < want) return 'incomplete';
      return { status, headers, text: rest.subarray(0, want).toString('utf8') };
    }
    if (rest.length >= opts.maxBytes)
      return { status, headers, text: rest.subarray(0, opts.maxBytes).toString('utf8') };
    return opts.ended ? { status, headers, text: rest.toString('utf8') } : 'incomplete';
  }
}

function dechunk(buf: Buffer, maxBytes: number): Buffer | 'incomplete' | 'malformed' {
  const parts: Buffer[] = [];
  let size = 0;
  let pos = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol === -1) return 'incomplete';
    const sizeText = buf.subarray(pos, eol).toString('latin1').split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return 'malformed';
    const n = Number.parseInt(sizeText, 16);
    if (n === 0) {
      // Trailers (rare) end with an empty line; the body itself is complete now.
      return Buffer.concat(parts);
    }
    if (buf.length < eol + 2 + n) {
      const partial = buf.subarray(eol + 2);
      if (size + partial.length >= maxBytes) return Buffer.concat([...parts, partial]).subarray(0, maxBytes);
      return 'incomplete';
    }
    parts.push(buf.subarray(eol + 2, eol + 2 + n));
    size += n;
    if (size >= maxBytes) return Buffer.concat(parts).subarray(0, maxBytes);
    pos = eol + 2 + n + 2;
  }
}
