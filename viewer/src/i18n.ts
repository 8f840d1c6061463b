// UI strings in English and Chinese; the language comes from a saved choice, else navigator.language.
export type Lang = 'en' | 'zh';

const en = {
  tagline: 'What your agents remember, as it happens.',
  tokenLabel: 'Access token',
  tokenPlaceholder: 'cairn_…',
  remember: 'Remember on this device',
  signIn: 'Sign in',
  signingIn: 'Signing in…',
  signOut: 'Sign out',
  tokenEmpty: 'Paste your cairn token first.',
  tokenInvalid: 'That token was not accepted. Check that you copied all of it, or ask your team admin for a new one.',
  tokenExpired: 'This token has expired. Ask your team admin for a new one.',
  tokenRevoked: 'This token has been revoked. Ask your team admin for a new one.',
  tokenScope: 'This token cannot read memories (it lacks the "read" scope).',
  networkError: 'Could not reach the server. Check your connection and try again.',
  serverError: 'The server could not answer ({code}). Try again in a moment.',
  allProjects: 'All projects',
  privateMark: 'private',
  allTypes: 'All types',
  allAuthors: 'Everyone',
  searchPlaceholder: 'Search memories…',
  search: 'Search',
  clearSearch: 'Back to recent',
  recent: 'Recent activity',
  resultsFor: 'Results for “{q}”',
  resultCount: '{n} found',
  empty: 'Nothing here yet. New observations appear as your agents work.',
  noResults: 'No matches.',
  loadMore: 'Load more',
  loading: 'Loading…',
  live: 'Live',
  connecting: 'Connecting…',
  offline: 'Reconnecting…',
  pickItem: 'Select an item to see its full record.',
  close: 'Close',
  back: 'Back',
  openSession: 'Open session',
  session: 'Session',
  summary: 'Summary',
  untitled: '(untitled)',
  primed: 'primed',
  primedHint: 'Made by cairn prime from the repository (docs headings, commits, TODOs), not from a session',
  narrative: 'What happened',
  facts: 'Facts',
  concepts: 'Concepts',
  filesRead: 'Files read',
  filesModified: 'Files modified',
  request: 'Request',
  investigated: 'Investigated',
  learned: 'Learned',
  completed: 'Completed',
  nextSteps: 'Next steps',
  notes: 'Notes',
  promptN: 'prompt {n}',
  tokensN: '~{n} tokens',
  prompts: '{n} prompts',
  started: 'Started {t}',
  ended: 'ended {t}',
  ongoing: 'still running',
  sessionObservations: 'Observations in this session',
  sessionSummaries: 'Summaries',
  notAvailable: 'This record is not available. It may have been deleted, or you may not have access.',
  language: '中文',
  by: 'by {who}',
  signedInAs: '{who} · {team}',
  spend: 'Spend',
  spendTitle: 'Observer spend, last {n} days',
  spendObserver: 'Observer: {who}',
  spendHeuristic: 'heuristic (no model, no cost)',
  spendReadOnly: '(read-only turns: {model})',
  spendModel: 'Model',
  spendCalls: 'Calls',
  spendInput: 'Input',
  spendOutput: 'Output',
  spendCacheRead: 'Cache read',
  spendCacheWrite: 'Cache write',
  spendCost: 'Est. cost',
  spendTotal: 'Total',
  spendTokensN: '{n} tokens',
  spendNoPrice: 'no price',
  spendNone: 'No observer calls in this period.',
  spendNoBudget: 'No token budget set for this team.',
  spendBudgetDay: 'today {spent} of {of} tokens',
  spendBudgetMonth: 'this month {spent} of {of} tokens',
  spendBudgetOut: 'budget spent: heuristic observer until {t}',
  spendEstimate: 'Costs are estimates from the server’s price table (US dollars); the provider’s bill is authoritative.',
  spendAdminOnly: 'Only team owners and admins, signed in with an admin token, can see spend.',
  supersededBy: 'Superseded by #{n}',
  outdatedMark: 'Outdated: nothing replaces it',
  correctTitle: 'Is this still true?',
  reasonLabel: 'Why (a sentence)',
  byLabel: 'Replaced by record # (optional)',
  supersede: 'Mark superseded',
  flagWrong: 'Wrong',
  flagOutdated: 'Outdated',
  flagUseful: 'Useful',
  reasonNeeded: 'Say why first.',
  corrected: 'Done: it left the context index.',
  flagged: 'Thanks: flagged for review.',
  notedUseful: 'Thanks: noted as useful.',
  alreadySaid: 'You already said so.',
  correctDenied: 'Only its author or a team admin can supersede it; flag it instead.',
  review: 'Review',
  reviewTitle: 'Review queue',
  reviewFlagged: 'Flagged',
  reviewSuperseded: 'Superseded',
  reviewEmpty: 'Nothing waits for review.',
  reviewConfirm: 'Confirm (forget)',
  reviewRestore: 'Restore',
  reviewKeep: 'Keep',
  reviewDone: '#{n}: {d}.',
} as const;

export type Key = keyof typeof en;

const zh: Record<Key, string> = {
  tagline: '实时查看你的智能体记住了什么。',
  tokenLabel: '访问令牌',
  tokenPlaceholder: 'cairn_…',
  remember: '在此设备上记住我',
  signIn: '登录',
  signingIn: '正在登录…',
  signOut: '退出登录',
  tokenEmpty: '请先粘贴你的 cairn 令牌。',
  tokenInvalid: '令牌无效。请确认已完整复制，或向团队管理员申请新的令牌。',
  tokenExpired: '令牌已过期，请向团队管理员申请新的令牌。',
  tokenRevoked: '令牌已被吊销，请向团队管理员申请新的令牌。',
  tokenScope: '此令牌没有读取记忆的权限（缺少 “read” 范围）。',
  networkError: '无法连接服务器，请检查网络后重试。',
  serverError: '服务器暂时无法响应（{code}），请稍后再试。',
  allProjects: '全部项目',
  privateMark: '私有',
  allTypes: '全部类型',
  allAuthors: '所有成员',
  searchPlaceholder: '搜索记忆…',
  search: '搜索',
  clearSearch: '返回最近动态',
  recent: '最近动态',
  resultsFor: '“{q}” 的搜索结果',
  resultCount: '共 {n} 条',
  empty: '这里还没有内容。智能体工作时，新的观察会实时出现。',
  noResults: '没有匹配的结果。',
  loadMore: '加载更多',
  loading: '加载中…',
  live: '实时',
  connecting: '正在连接…',
  offline: '正在重新连接…',
  pickItem: '选择一条记录以查看完整内容。',
  close: '关闭',
  back: '返回',
  openSession: '查看会话',
  session: '会话',
  summary: '会话总结',
  untitled: '（无标题）',
  primed: '预置',
  primedHint: '由 cairn prime 从仓库（文档标题、提交、TODO）生成，而非来自会话',
  narrative: '经过',
  facts: '要点',
  concepts: '概念',
  filesRead: '读取的文件',
  filesModified: '修改的文件',
  request: '请求',
  investigated: '调查内容',
  learned: '收获',
  completed: '已完成',
  nextSteps: '后续步骤',
  notes: '备注',
  promptN: '第 {n} 轮提示',
  tokensN: '约 {n} 个 token',
  prompts: '{n} 轮提示',
  started: '开始于 {t}',
  ended: '结束于 {t}',
  ongoing: '仍在进行',
  sessionObservations: '本会话的观察',
  sessionSummaries: '总结',
  notAvailable: '此记录不可用：可能已被删除，或你没有访问权限。',
  language: 'English',
  by: '{who}',
  signedInAs: '{who} · {team}',
  spend: '花费',
  spendTitle: '观察模型花费（最近 {n} 天）',
  spendObserver: '观察模型：{who}',
  spendHeuristic: '启发式（不调用模型，无花费）',
  spendReadOnly: '（只读轮次：{model}）',
  spendModel: '模型',
  spendCalls: '调用次数',
  spendInput: '输入',
  spendOutput: '输出',
  spendCacheRead: '缓存读取',
  spendCacheWrite: '缓存写入',
  spendCost: '估算费用',
  spendTotal: '合计',
  spendTokensN: '{n} 个 token',
  spendNoPrice: '无价格',
  spendNone: '此期间没有观察模型调用。',
  spendNoBudget: '团队未设置 token 预算。',
  spendBudgetDay: '今日 {spent} / {of} token',
  spendBudgetMonth: '本月 {spent} / {of} token',
  spendBudgetOut: '预算已用完：在 {t} 之前使用启发式观察',
  spendEstimate: '费用是根据服务器价格表估算的（美元），以服务商账单为准。',
  spendAdminOnly: '只有团队所有者和管理员使用带管理权限的令牌登录后才能查看花费。',
  supersededBy: '已被 #{n} 取代',
  outdatedMark: '已过时：没有替代记录',
  correctTitle: '这条还正确吗？',
  reasonLabel: '原因（一句话）',
  byLabel: '替代它的记录 #（可选）',
  supersede: '标记为已取代',
  flagWrong: '错误',
  flagOutdated: '过时',
  flagUseful: '有用',
  reasonNeeded: '请先写明原因。',
  corrected: '完成：它已离开上下文索引。',
  flagged: '谢谢：已提交审核。',
  notedUseful: '谢谢：已记为有用。',
  alreadySaid: '你已经反馈过了。',
  correctDenied: '只有作者或团队管理员可以取代它；你可以提交反馈。',
  review: '审核',
  reviewTitle: '审核队列',
  reviewFlagged: '被标记',
  reviewSuperseded: '已取代',
  reviewEmpty: '没有待审核的记录。',
  reviewConfirm: '确认（删除）',
  reviewRestore: '恢复',
  reviewKeep: '保留',
  reviewDone: '#{n}：{d}。',
};

const TYPE_LABELS: Record<Lang, Record<string, string>> = {
  en: {
    bugfix: 'Bug fix', feature: 'Feature', refactor: 'Refactor', change: 'Change', discovery: 'Discovery',
    decision: 'Decision', security_alert: 'Security alert', security_note: 'Security note', sensitive: 'Sensitive',
    summary: 'Summary',
  },
  zh: {
    bugfix: '缺陷修复', feature: '新功能', refactor: '重构', change: '变更', discovery: '发现', decision: '决策',
    security_alert: '安全警报', security_note: '安全备注', sensitive: '敏感', summary: '会话总结',
  },
};

/** Types offered in the filter before any are seen; types met in the data are added to the list. */
export const KNOWN_TYPES = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision', 'security_alert', 'security_note'];

const DICTS: Record<Lang, Record<Key, string>> = { en, zh };

export function pickLang(saved: string | null, navigatorLang: string | undefined): Lang {
  if (saved === 'en' || saved === 'zh') return saved;
  return /^zh\b/i.test(navigatorLang ?? '') ? 'zh' : 'en';
}

export function translate(lang: Lang, key: Key, vars: Record<string, string | number> = {}): string {
  return DICTS[lang][key].replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

export const typeLabel = (lang: Lang, type: string): string => TYPE_LABELS[lang][type] ?? type;

/** "3 minutes ago" / "3 分钟前"; older than a week becomes a date. `now` is a parameter to keep this pure. */
export function relativeTime(lang: Lang, ms: number, now: number): string {
  const diff = Math.round((ms - now) / 1000);
  const abs = Math.abs(diff);
  const rtf = new Intl.RelativeTimeFormat(lang === 'zh' ? 'zh-CN' : 'en', { numeric: 'auto' });
  if (abs < 45) return rtf.format(0, 'second');
  if (abs < 3600) return rtf.format(Math.round(diff / 60), 'minute');
  if (abs < 86_400) return rtf.format(Math.round(diff / 3600), 'hour');
  if (abs < 7 * 86_400) return rtf.format(Math.round(diff / 86_400), 'day');
  return absoluteTime(lang, ms);
}

export function absoluteTime(lang: Lang, ms: number): string {
  return new Intl.DateTimeFormat(lang === 'zh' ? 'zh-CN' : 'en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(ms));
}

export function formatTokens(lang: Lang, n: number): string {
  return new Intl.NumberFormat(lang === 'zh' ? 'zh-CN' : 'en').format(n);
}

/** US dollars, with enough digits that a few thousand tokens do not read as $0.00; null (no price) stays null. */
export function formatUsd(lang: Lang, usd: number | null): string | null {
  if (usd === null) return null;
  const digits = usd !== 0 && Math.abs(usd) < 1 ? 4 : 2;
  return new Intl.NumberFormat(lang === 'zh' ? 'zh-CN' : 'en', { style: 'currency', currency: 'USD', minimumFractionDigits: digits, maximumFractionDigits: digits }).format(usd);
}
