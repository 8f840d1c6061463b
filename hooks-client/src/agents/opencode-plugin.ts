// The OpenCode plugin `cairn install --agent opencode` writes: plain JavaScript that OpenCode loads from its
// plugin folder. It only forwards: each hook's payload goes to `node <client> hook <event> --agent opencode` on
// stdin, in a child process the plugin never waits for, so recording cannot slow or stop the agent. The mapping
// onto cairn's events is the client's (opencodeAdapter), where it is tested.

/** Marks the file as cairn's, so uninstall takes out only its own plugin. */
export const PLUGIN_MARK = 'cairn-opencode-plugin v1';

export function opencodePluginSource(clientPath: string): string {
  return `// ${PLUGIN_MARK}: written by \`cairn install --agent opencode\`; \`cairn uninstall --agent opencode\` removes it.
// Hands OpenCode's events to the cairn client in child processes it never waits for.
import { spawn } from "node:child_process";

const CLIENT = ${JSON.stringify(clientPath)};
const MAX_OUTPUT = 100000;

function send(event, payload, onAnswer) {
  try {
    const child = spawn("node", [CLIENT, "hook", event, "--agent", "opencode"], {
      stdio: ["pipe", onAnswer ? "pipe" : "ignore", "ignore"],
      detached: !onAnswer,
      windowsHide: true,
    });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    if (onAnswer) {
      let out = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (d) => { if (out.length < MAX_OUTPUT) out += d; });
      child.on("close", () => { try { onAnswer(out); } catch {} });
    } else {
      child.unref();
    }
    child.stdin.end(JSON.stringify(payload));
  } catch {}
}

export const CairnMemory = async ({ directory }) => {
  const started = new Set();
  const contexts = new Map();
  const assistant = new Map();
  const texts = new Map();

  const start = (sessionID) => {
    if (!sessionID || started.has(sessionID)) return;
    started.add(sessionID);
    send("session-start", { directory, sessionID }, (out) => {
      const answer = out.trim() ? JSON.parse(out) : null;
      if (answer && typeof answer.context === "string" && answer.context) contexts.set(sessionID, answer.context);
    });
  };

  const end = (sessionID, reason) => {
    if (!started.delete(sessionID)) return;
    contexts.delete(sessionID);
    send("session-end", { directory, sessionID, reason });
  };

  const onEvent = (event) => {
    const p = event.properties || {};
    if (event.type === "session.created" && p.info) start(p.info.id);
    else if (event.type === "message.updated" && p.info && p.info.role === "assistant") assistant.set(p.info.sessionID, p.info.id);
    else if (event.type === "message.part.updated" && p.part && p.part.type === "text" && !p.part.synthetic) {
      const message = texts.get(p.part.messageID) || { sessionID: p.part.sessionID, parts: new Map() };
      message.parts.set(p.part.id, p.part.text);
      texts.set(p.part.messageID, message);
    } else if (event.type === "session.idle" && p.sessionID) {
      const id = assistant.get(p.sessionID);
      const text = id && texts.has(id) ? [...texts.get(id).parts.values()].join("\\n") : undefined;
      // Only the turn's last answer is wanted: forget this session's texts, so memory stays bounded.
      for (const [messageID, message] of texts) if (message.sessionID === p.sessionID) texts.delete(messageID);
      assistant.delete(p.sessionID);
      start(p.sessionID);
      send("stop", { directory, sessionID: p.sessionID, text });
    } else if (event.type === "session.deleted" && p.info) end(p.info.id, "deleted");
  };

  return {
    "chat.message": async (input, output) => {
      start(input.sessionID);
      // Only text parts: an attached image or file can be megabytes the prompt does not need.
      const parts = (output.parts || []).filter((part) => part.type === "text").map((part) => ({ type: part.type, text: part.text, synthetic: part.synthetic }));
      send("user-prompt-submit", { directory, input: { sessionID: input.sessionID, messageID: input.messageID }, output: { parts } });
    },
    "tool.execute.after": async (input, output) => {
      send("post-tool-use", { directory, input, output: { title: output.title, output: output.output } });
    },
    "experimental.chat.system.transform": async (input, output) => {
      const context = input.sessionID && contexts.get(input.sessionID);
      if (context) output.system.push(context);
    },
    event: async ({ event }) => {
      try { onEvent(event); } catch {}
    },
    dispose: async () => {
      for (const sessionID of [...started]) end(sessionID, "exit");
    },
  };
};
`;
}
