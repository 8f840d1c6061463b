// The Claude Code plugin (plugin/, .claude-plugin/marketplace.json) and `cairn install` say the same thing:
// same events, matchers, timeouts and async flags, so neither can drift from the other.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pluginFiles } from '../../src/agents/claude-code';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir } from '../support';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');

interface Handler {
  command: string;
  args?: string[];
  timeout?: number;
  async?: boolean;
}
type Hooks = Record<string, Array<{ matcher?: string; hooks: Handler[] }>>;

/** event → "matcher | cairn hook event | timeout | async" for each handler, whichever way the command is spelled. */
function shape(hooks: Hooks): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    out[event] = groups.flatMap((g) =>
      g.hooks.map((h) => {
        const argv = h.args ? [h.command, ...h.args] : h.command.split(/\s+/);
        return `${g.matcher ?? ''} | ${argv.slice(-2).join(' ')} | ${h.timeout} | ${h.async === true}`;
      }),
    );
  }
  return out;
}

/**
 * The plugin keeps PostToolUse a command hook: a plugin cannot put the sender's secret into Claude Code's
 * environment (settings `env`), which the HTTP hook's header reads. So it matches an install with the sender off.
 */
async function installedHooks(): Promise<Hooks> {
  const { home, env } = machine(null);
  env.CAIRN_SENDER = 'off';
  env.PATH = tempDir('cairn-path-');
  mkdirSync(join(home, '.claude'), { recursive: true });
  expect(await run(['install', '--client', '/opt/cairn/cairn.cjs', '--no-mcp'], memIo({ env }))).toBe(0);
  return (JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')) as { hooks: Hooks }).hooks;
}

describe('the Claude Code plugin', () => {
  it('has the hooks `cairn install` writes: same events, matchers, timeouts and async flags', async () => {
    const plugin = (JSON.parse(read('plugin/hooks/hooks.json')) as { hooks: Hooks }).hooks;
    const installed = await installedHooks();
    expect(shape(plugin)).toEqual(shape(installed));
    expect(Object.keys(plugin)).toContain('SessionStart');
    expect(plugin.SessionStart![0]!.matcher).toBe('startup|resume|clear|compact|fork');
  });

  it('committed plugin files are the ones the build generates (run `npm run build:client` after changing the plan)', () => {
    for (const [rel, text] of Object.entries(pluginFiles())) expect(read(rel), rel).toBe(text);
  });

  it('is listed by the repository’s marketplace under the plugin’s own name and version', () => {
    const market = JSON.parse(read('.claude-plugin/marketplace.json')) as {
      name: string;
      owner: { name: string };
      plugins: Array<{ name: string; source: string; version: string }>;
    };
    const manifest = JSON.parse(read('plugin/.claude-plugin/plugin.json')) as {
      name: string;
      version: string;
      userConfig: Record<string, { required?: boolean; sensitive?: boolean }>;
    };
    expect(market.owner.name).toBeTruthy();
    expect(market.plugins).toEqual([
      expect.objectContaining({ name: manifest.name, source: './plugin', version: manifest.version }),
    ]);
    expect(manifest.userConfig.url!.required).toBe(true);
    expect(manifest.userConfig.token).toMatchObject({ required: true, sensitive: true });
  });

  it('registers the MCP server from the plugin’s options, with the token only as a placeholder', () => {
    const mcp = JSON.parse(read('plugin/.mcp.json')) as {
      mcpServers: Record<string, { url: string; headers: Record<string, string> }>;
    };
    expect(mcp.mcpServers.cairn!.url).toBe('${user_config.url}/mcp');
    expect(mcp.mcpServers.cairn!.headers.Authorization).toBe('Bearer ${user_config.token}');
  });
});

describe('the plugin’s slash commands and its login', () => {
  it('keeps the url and token its SessionStart hook was given, owner-only, for commands that get no plugin variables; cairn login’s own file wins', async () => {
    const fake = await fakeServer();
    try {
      const { home, env } = machine(null);
      const plugin = {
        ...env,
        CLAUDE_PLUGIN_OPTION_URL: fake.url,
        CLAUDE_PLUGIN_OPTION_TOKEN: 'tok-plugin',
        CAIRN_SENDER: 'off',
      };
      const before = memIo({ env });
      expect(await run(['status'], before)).toBe(0);
      expect(before.stdout).toContain('server:  not configured');
      const stdin = hookJson({ session_id: 'plug-1', cwd: home, hook_event_name: 'SessionStart', source: 'startup' });
      expect(await run(['hook', 'session-start'], memIo({ env: plugin, cwd: home, stdin }))).toBe(0);
      const kept = join(home, '.config', 'cairn', 'plugin.json');
      expect(JSON.parse(readFileSync(kept, 'utf8'))).toEqual({ url: fake.url, token: 'tok-plugin' });
      expect(statSync(kept).mode & 0o777).toBe(0o600);
      // A `!` line of /cairn:status: no plugin variables in its environment.
      const seen = fake.requests.length;
      const after = memIo({ env });
      await run(['status'], after);
      expect(after.stdout).not.toContain('not configured');
      expect(fake.requests.slice(seen).some((r) => r.headers.authorization === 'Bearer tok-plugin')).toBe(true);
      // `cairn login`'s own file wins over the kept plugin login.
      expect(await run(['login', '--url', 'https://elsewhere.example', '--token', 'tok-own'], memIo({ env }))).not.toBe(
        2,
      );
      const mine = memIo({ env });
      await run(['status'], mine);
      expect(mine.stdout).toContain('elsewhere.example');
    } finally {
      await fake.close();
    }
  });
});
