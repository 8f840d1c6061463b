// Hashing and token helpers: tokens are random, shown once, and stored only as SHA-256.

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Constant-time comparison of two strings of equal expected length. */
export function timingSafeEqual(a: string, b: string): boolean {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  let diff = ea.length ^ eb.length;
  const n = Math.max(ea.length, eb.length);
  for (let i = 0; i < n; i++) diff |= (ea[i % (ea.length || 1)] ?? 0) ^ (eb[i % (eb.length || 1)] ?? 0);
  return diff === 0;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A new bearer token: `cairn_` + 40 random base62 characters (~238 bits). */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(40));
  let out = '';
  for (const b of bytes) out += ALPHABET[b % 62];
  return `cairn_${out}`;
}

export const tokenPrefix = (token: string) => token.slice(0, 12);
