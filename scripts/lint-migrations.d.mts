export interface MigrationProblem {
  line: number;
  rule: 'crlf' | 'comment-quote' | 'comment-semicolon' | 'keyword-case' | 'transaction';
  message: string;
}
export function lintMigrationSql(text: string): MigrationProblem[];
export function lintMigrationsDir(dir: string): (MigrationProblem & { file: string })[];
