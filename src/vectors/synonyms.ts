// A small built-in thesaurus of coding vocabulary plus a light stemmer, so the offline embedder can match
// paraphrases ("sign in" ≈ "login", "slow" ≈ "latency"). Each group maps to its first word.

const GROUPS: string[][] = [
  ['auth', 'login', 'logon', 'signin', 'authenticate', 'authentication', 'authn', 'credential', 'oauth', 'sso', '登录', '认证', '鉴权', 'グイ', '認証'],
  ['token', 'jwt', 'bearer', 'apikey', 'トー', 'ーク', 'クン', '令牌'],
  ['permission', 'authorization', 'authz', 'acl', 'role', 'access', 'forbidden', '403', '权限', '権限'],
  ['error', 'exception', 'crash', 'panic', 'failure', 'fail', 'broken', 'throw', 'traceback', 'stacktrace', '报错', '错误', '异常', 'エラ', 'ラー'],
  ['bug', 'defect', 'regression', 'issue', 'glitch', '缺陷'],
  ['fix', 'repair', 'patch', 'resolve', 'workaround', 'hotfix', '修复', '修正'],
  ['slow', 'latency', 'performance', 'perf', 'sluggish', 'speed', 'fast', 'faster', 'slowness', 'lag', 'bottleneck', '性能', '慢'],
  ['cache', 'memoize', 'memoization', 'caching', 'ttl', 'lru', 'redis', '缓存', 'キャ', 'ャッ', 'ッシ', 'シュ'],
  ['db', 'database', 'sql', 'sqlite', 'postgres', 'postgresql', 'mysql', 'd1', 'query', 'table', '数据', '据库', 'デー', 'ータ'],
  ['migration', 'migrate', 'schema', 'alter', 'ddl', '迁移'],
  ['index', 'indexes', 'indices', 'indexing', '索引'],
  ['timeout', 'hang', 'stuck', 'freeze', 'deadline', 'unresponsive', '超时', 'タイ', 'イム', 'ムア', 'アウ'],
  ['retry', 'backoff', 'reattempt', 'retries', '重试'],
  ['limit', 'throttle', 'ratelimit', 'quota', '429', '限流'],
  ['memory', 'ram', 'heap', 'oom', 'leak', '内存', 'メモ', 'モリ'],
  ['test', 'spec', 'unittest', 'vitest', 'jest', 'assert', 'testing', '测试', 'テス', 'スト'],
  ['config', 'configuration', 'settings', 'setting', 'option', 'env', 'environment', 'dotenv', 'toml', 'yaml', '配置', '設定'],
  ['deploy', 'deployment', 'release', 'ship', 'publish', 'rollout', 'production', 'prod', '部署', 'デプ', 'プロ'],
  ['dependency', 'package', 'library', 'lib', 'npm', 'module', 'upgrade', 'bump', 'version', '依赖'],
  ['start', 'startup', 'boot', 'launch', 'init', 'initialize', 'bootstrap', 'cold', '启动', '起動'],
  ['request', 'http', 'fetch', 'endpoint', 'api', 'route', 'handler', 'rest', '请求', 'リク'],
  ['response', 'reply', 'status', 'payload', 'body', '响应'],
  ['delete', 'remove', 'drop', 'purge', 'erase', 'cleanup', '删除', '削除'],
  ['create', 'add', 'insert', 'new', 'introduce', '新增', '追加'],
  ['update', 'modify', 'change', 'edit', 'mutate', '更新', '修改'],
  ['user', 'account', 'member', 'customer', 'profile', '用户', 'ユー', 'ーザ'],
  ['password', 'passwd', 'secret', 'hash', 'bcrypt', 'argon2', '密码', 'パス', 'スワ'],
  ['ui', 'frontend', 'component', 'button', 'page', 'view', 'render', 'react', 'css', 'style', 'layout', '界面', '画面'],
  ['log', 'logging', 'logger', 'trace', 'telemetry', 'observability', 'metric', '日志', 'ログ'],
  ['git', 'branch', 'commit', 'merge', 'rebase', 'pr', 'pull'],
  ['build', 'compile', 'bundle', 'bundler', 'esbuild', 'webpack', 'vite', 'tsc', 'transpile', '构建', '编译', 'ビル'],
  ['type', 'types', 'typing', 'typescript', 'typecheck', 'generic', 'interface'],
  ['queue', 'job', 'worker', 'background', 'async', 'task', 'scheduler', 'cron', '队列', 'キュ'],
  ['concurrency', 'race', 'lock', 'mutex', 'deadlock', 'parallel', 'concurrent', 'atomic', '并发', '競合'],
  ['search', 'find', 'lookup', 'grep', 'fulltext', 'fts', '搜索', '检索', '検索'],
  ['upload', 'file', 'attachment', 'blob', 'storage', 's3', 'r2', '上传', '文件', 'ファ', 'ァイ', 'イル'],
  ['email', 'mail', 'smtp', 'notification', 'notify', '邮件', 'メー'],
  ['payment', 'billing', 'invoice', 'stripe', 'checkout', 'charge', 'subscription', '支付', '決済'],
  ['date', 'time', 'timezone', 'utc', 'timestamp', 'clock', 'dst', '时间', '时区', '日時', 'タイムゾ'],
  ['encoding', 'utf8', 'unicode', 'charset', 'encode', 'decode', 'mojibake', '编码', '文字'],
  ['websocket', 'socket', 'ws', 'realtime', 'sse', 'stream', 'streaming'],
  ['docker', 'container', 'image', 'kubernetes', 'k8s', 'pod', 'helm'],
  ['ci', 'pipeline', 'github', 'actions', 'workflow', 'runner'],
  ['refactor', 'restructure', 'cleanup', 'simplify', 'extract', 'rename', '重构'],
  ['validate', 'validation', 'validator', 'zod', 'sanitize', 'check', 'verify', '校验', '検証'],
  ['null', 'undefined', 'nil', 'none', 'missing', 'empty'],
  ['crypto', 'encrypt', 'encryption', 'decrypt', 'tls', 'ssl', 'certificate', 'cert', 'https', '加密', '暗号'],
  ['cors', 'origin', 'preflight', 'crossorigin'],
  ['pagination', 'paginate', 'offset', 'cursor', 'page', '分页'],
  ['flaky', 'intermittent', 'nondeterministic', 'sporadic', 'random', '不稳定'],
];

const CANON = new Map<string, string>();
for (const group of GROUPS) for (const w of group) if (!CANON.has(w)) CANON.set(w, group[0]!);

/** A deliberately small stemmer: plural and common verb/noun endings only. */
export function stem(w: string): string {
  if (w.length <= 4 || /[^a-z]/.test(w)) return w;
  for (const [suffix, repl] of [
    ['ations', 'ate'], ['ation', 'ate'], ['ies', 'y'], ['ing', ''], ['ed', ''], ['es', ''], ['s', ''], ['er', ''], ['ly', ''],
  ] as const) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) return w.slice(0, -suffix.length) + repl;
  }
  return w;
}

/** The word's synonym-group head, trying the word, then its stem. */
export function canonicalWord(w: string): string {
  return CANON.get(w) ?? CANON.get(stem(w)) ?? stem(w);
}
