// Files whose contents are credentials by nature: only metadata about touching them is sent, never the text.

const SENSITIVE_NAMES = [
  /^\.env(?:\..*)?$/i, // .env, .env.local, .env.production
  /^\.envrc$/i,
  /\.(?:pem|key|p12|pfx|jks|keystore|ppk|asc|gpg|kdbx)$/i,
  /^id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$/i,
  /^(?:credentials|\.netrc|_netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.htpasswd|secrets?\.(?:ya?ml|json|toml))$/i,
  /^.*credentials.*\.json$/i,
  /^service[-_]?account.*\.json$/i,
  /\.tfvars$/i,
];
const SENSITIVE_DIRS = /(?:^|[\\/])(?:\.ssh|\.aws|\.gnupg|\.docker|\.kube)[\\/]/i;
const SAFE_TEMPLATES = /\.(?:example|sample|template|dist)$/i;

export const baseName = (p: string): string => p.split(/[\\/]/).pop() ?? p;

export function isSensitivePath(path: string): boolean {
  const name = baseName(path);
  if (SAFE_TEMPLATES.test(name)) return false;
  return SENSITIVE_DIRS.test(path) || SENSITIVE_NAMES.some((re) => re.test(name));
}

const PATH_KEYS = ['file_path', 'notebook_path', 'path', 'filePath'];

/** The file a tool call reads or writes, when its input names one. */
export function toolFilePath(toolInput: unknown): string | null {
  if (!toolInput || typeof toolInput !== 'object') return null;
  const input = toolInput as Record<string, unknown>;
  for (const k of PATH_KEYS) if (typeof input[k] === 'string' && input[k]) return input[k] as string;
  return null;
}

const size = (v: unknown): number => (typeof v === 'string' ? v.length : (JSON.stringify(v) ?? '').length);

/**
 * For a tool call on a sensitive file, replaces contents with a description (path, size), keeping what the
 * observer needs to know that the file was touched. Returns null when the file is not sensitive.
 */
export function metadataOnly(
  toolName: string,
  toolInput: unknown,
  toolResponse: unknown,
): { input: unknown; response: unknown } | null {
  const path = toolFilePath(toolInput);
  if (!path || !isSensitivePath(path)) return null;
  const note = `contents of sensitive file not sent (${size(toolResponse)} chars)`;
  const input: Record<string, unknown> = { file_path: path };
  const raw = toolInput as Record<string, unknown>;
  for (const k of ['offset', 'limit', 'replace_all']) if (k in raw) input[k] = raw[k];
  if (toolName !== 'Read') input.content = `[omitted: ${size(toolInput)} chars of edits to a sensitive file]`;
  return { input, response: { omitted: note } };
}
