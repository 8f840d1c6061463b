// Pure: turns a git remote URL into the project key every clone of the repository shares.

/**
 * `git@github.com:Acme/Widgets.git`, `https://github.com/acme/widgets`, `ssh://git@github.com:22/acme/widgets`
 * all become `github.com/acme/widgets`. Returns null for remotes that name no host (local paths, file://).
 */
export function normaliseRemote(remote: string): string | null {
  let r = remote.trim();
  if (!r) return null;
  let host: string;
  let path: string;
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(r);
  const url = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/]*@)?([^/:]+)(?::\d+)?\/(.+)$/i.exec(r);
  if (url) {
    if (url[1]!.toLowerCase() === 'file') return null;
    host = url[2]!;
    path = url[3]!;
  } else if (scp && !/^[a-z]:$/i.test(`${scp[1]}:`) && !r.startsWith('/')) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    return null;
  }
  host = host.toLowerCase().replace(/^www\./, '');
  path = path
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .replace(/^\/+/, '');
  // Azure DevOps names one repository two ways: ssh `v3/org/proj/repo`, https `org/proj/_git/repo`.
  if (host === 'ssh.dev.azure.com' || host === 'vs-ssh.visualstudio.com') {
    host = 'dev.azure.com';
    path = path.replace(/^v3\//, '');
  }
  if (host === 'dev.azure.com') path = path.replace('/_git/', '/');
  const segments = path.split('/').filter(Boolean);
  if (!segments.length) return null;
  r = `${host}/${segments.join('/')}`.toLowerCase();
  return r;
}

/** `local/<folder>` for a directory without a usable remote (Windows or POSIX separators). */
export function localKey(dir: string): string {
  const name =
    dir
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || 'root';
  return `local/${name.toLowerCase()}`;
}
