// What the MCP server tells the agent about itself: the step-by-step way to pull memory without flooding context.

export const SERVER_NAME = 'cairn';
export const SERVER_VERSION = '0.1.0';

export const INSTRUCTIONS = `cairn is the shared memory of this team's coding sessions: observations (what was learned, fixed, built or decided) and session summaries, across machines and teammates.

Pull details in small steps, cheapest first:
1. search(query) — a one-line index per match: id, time, type, title, and roughly how many tokens the full record costs. Narrow with project, type, file, author or dates. kind="all" also finds session summaries (S12: what a session asked, learned and completed) and the user's earlier prompts (P7) — use it for "what did we decide about …".
2. timeline(anchor=<id>) — what happened just before and after one match (anchor="S12" for a summary), to judge which records matter.
3. get_observations(ids=[…]) — full records, only for the ids you picked; ask for several in one call. Summaries and prompts too: ids=["S12", "P7"].

The context index shown at session start already lists recent ids: start from it before searching. Project keys look like github.com/org/repo and appear in that index's first line.

remember(project, text) saves something the user asks you to keep; remember(scope="personal", text) keeps a preference or rule of the user's own (it follows them into every project, nobody else sees it). forget(id) removes an observation; only its author or a team admin may do that.`;
