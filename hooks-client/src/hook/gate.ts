// Gate 0: cheap local checks that decide an event is not worth sending at all. Pure.
import { isPathExcluded } from '#shared/glob';
import { isTaskNotificationOnly } from '#shared/tags';

import type { HookEvent } from '../hook-events';

export interface GateInput {
  event: HookEvent;
  cwd: string;
  project: string;
  toolName: string | null;
  prompt: string | null;
  /** CAIRN_INTERNAL=1 is set by anything cairn itself runs Claude in (an observer, an import). */
  internal: boolean;
  excludeProjects: readonly string[];
  skipTools: readonly string[];
  home: string;
}

export type GateResult =
  | { skip: false }
  | { skip: true; reason: 'own_traffic' | 'project_excluded' | 'tool_skipped' | 'protocol_payload' };

// Calls to cairn's own MCP tools are recall, not work: observing them would only echo memory back.
const OWN_TOOL = /^mcp__(?:cairn|plugin_cairn_[^_]+)__/;

export function gate0(g: GateInput): GateResult {
  if (g.internal) return { skip: true, reason: 'own_traffic' };
  const ci = process.platform === 'win32';
  if (
    g.excludeProjects.length &&
    (isPathExcluded(g.cwd, g.excludeProjects, g.home, ci) || isPathExcluded(g.project, g.excludeProjects, g.home, ci))
  ) {
    return { skip: true, reason: 'project_excluded' };
  }
  if ((g.event === 'post-tool-use' || g.event === 'post-tool-use-failure') && g.toolName) {
    const reason = toolSkipped(g.toolName, g.skipTools);
    if (reason) return { skip: true, reason };
  }
  if (g.event === 'user-prompt-submit' && g.prompt && isTaskNotificationOnly(g.prompt))
    return { skip: true, reason: 'protocol_payload' };
  return { skip: false };
}

/** Why a tool call is not recorded (cairn's own tools, the user's skip list), or null to record it. */
export function toolSkipped(toolName: string, skipTools: readonly string[]): 'own_traffic' | 'tool_skipped' | null {
  if (OWN_TOOL.test(toolName)) return 'own_traffic';
  return skipTools.includes(toolName) ? 'tool_skipped' : null;
}
