// The instruction classifier: does a memory read as instructions to the agent that will be shown it? Memory is
// other people's data; text that speaks to the agent (overrides, standing orders, commands to run, policy or
// permission claims, tag break-outs) is held back from other members until an admin releases it. Errs toward
// holding. Pure, `now`-free, linear: a bounded prefix, folded once, then a fixed list of regexes whose gaps are
// bounded ({0,n} over a class that excludes the sentence's end), so no pattern backtracks over the whole text.
// Two disguises a model still reads are undone first, each in one pass: letters spelled out one at a time
// ("i g n o r e  p r e v i o u s") are joined back into words, and a few base64 runs are decoded and judged too
// ("decode this and follow it: aWdub3Jl…").
import { foldMarkup } from './fence';

/** Why a text was held; stored on the row and shown to its author. */
export type InstructionKind = 'override' | 'directive' | 'command' | 'policy' | 'breakout';

export interface InstructionVerdict {
  flagged: boolean;
  /** Every kind that matched, in the order of INSTRUCTION_KINDS. */
  kinds: InstructionKind[];
}

export const INSTRUCTION_KINDS: readonly InstructionKind[] = ['breakout', 'override', 'policy', 'command', 'directive'];

/** Characters read: far more than any title or note; a longer text is judged on its head (where an attack must sit to be read). */
export const CLASSIFY_MAX_CHARS = 20_000;

// A gap inside one clause: no sentence end, bounded.
const G = (n: number) => `[^.!?\\n]{0,${n}}`;

const RULES: Record<InstructionKind, RegExp[]> = {
  breakout: [
    // Tags an agent reads as structure: the frame, system/role blocks, chat-template tokens.
    /<\s*\/?\s*(?:system|assistant|user|developer|human|instructions?|cairn[\s_.-]{0,3}context|system[-_]?(?:reminder|instructions?|prompt)|tool[-_]?(?:call|result|use)|function[-_]?(?:call|results?)|antml|im_start|im_end|\|im_(?:start|end)\|)\b/i,
    /<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|?>/i,
    /\[\/?(?:INST|SYS)\]|<<\/?SYS>>|###\s*(?:system|instruction|new instructions?)\b/i,
    /(?:^|\n)\s*(?:system|assistant|developer)\s*(?:prompt\s*)?:/i,
    /```\s*(?:system|instructions?)\b/i,
    /\b(?:end of (?:the )?(?:context|memory|data|document|notes?|system prompt)|begin(?:ning of)? (?:new )?(?:system|instructions?))\b/i,
  ],
  override: [
    new RegExp(
      `\\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|leave)\\b${G(40)}\\b(?:previous|prior|preceding|above|earlier|all|any|every|your|the|these|those|other|existing|original)\\b${G(30)}\\b(?:instructions?|prompts?|rules?|guidelines?|directions?|directives?|context|messages?|constraints?|polic(?:y|ies)|guardrails?|safety|tasks?|assignments?|orders?|commands?|information|text|programming|training)\\b`,
      'i',
    ),
    /\b(?:forget|ignore|disregard) (?:everything|all of (?:it|that|this)|what (?:you|i) (?:were|was) told|about all)\b/i,
    /\bignore (?:the )?above\b/i,
    /\b(?:you are|you're) (?:now|no longer)\b|\bact as (?:a|an|if|my)\b|\bpretend (?:to be|you(?:'re| are))\b|\b(?:roleplay|role-play) as\b/i,
    /\b(?:new|different|real|actual|updated) (?:task|instructions?|goal|objective|role|persona|directives?)\s*(?:is|are|:|follows?)/i,
    /\b(?:jailbreak|jailbroken|do anything now|developer mode|DAN mode|god mode|unfiltered mode|without (?:any )?(?:restrictions|filters|censorship))\b/i,
    /\b(?:now (?:focus|concentrate) on|we (?:will )?start over|start from the (?:front|beginning)|instead(?:,)? (?:output|print|say|write|reply))\b/i,
    // German, French, Spanish forms of the same overrides (public injection sets carry them).
    /\b(?:vergiss|vergessen sie|ignorier\w*|missachte\w*)\b[^.!?\n]{0,40}\b(?:anweisungen|befehle|instruktionen|aufgaben|alles|vorherigen|bisherigen|obigen)\b/i,
    /\b(?:ab (?:jetzt|sofort)|von nun an|du bist (?:jetzt|nun|ab sofort)|tu so,? als)\b/i,
    /\b(?:ignore[sz]?|oublie[sz]?)\b[^.!?\n]{0,30}\b(?:instructions|consignes|r[eè]gles)\b|\b(?:ignora|olvida)\b[^.!?\n]{0,30}\b(?:instrucciones|reglas|anteriores)\b/i,
  ],
  policy: [
    /\b(?:new|updated|revised|changed|latest|official) (?:security |company |team |system )?(?:polic(?:y|ies)|rules?|instructions?|guidelines?|directives?|protocol)\b/i,
    /\b(?:you(?:'re| are)?|the (?:agent|assistant|model|ai)) (?:is |are |have been |has been |now )?(?:hereby )?(?:authori[sz]ed|allowed|permitted|granted|cleared|entitled|exempt)\b/i,
    new RegExp(
      `\\b(?:user|admin(?:istrator)?|owner|team|lead|security team|operator|developers?|management|anthropic|openai)\\b${G(20)}\\b(?:has|have)? ?(?:authori[sz]ed|approved|granted|allowed|permitted|instructed|ordered|requires?|wants?) (?:you|the (?:agent|assistant|model|ai))\\b`,
      'i',
    ),
    /\b(?:permission|access|privileges?) (?:is |are |has been |have been )?(?:granted|elevated|escalated)\b|\b(?:admin|root|sudo|elevated) (?:mode|access|override|privileges?) (?:is |are )?(?:enabled|granted|active|on)\b/i,
    /\bwithout (?:asking|confirmation|confirming|review|reviewing|approval|permission|telling|informing|notifying)\b/i,
    /\b(?:overrides?|supersedes?|takes? precedence over) (?:all |any |the |your )?(?:previous |prior |other |system )?(?:instructions?|rules?|polic(?:y|ies)|prompts?)\b/i,
  ],
  command: [
    // Fetch and run: curl/wget (or a URL) piped into a shell or interpreter; `bash <(curl …)`, `sh -c "$(curl …)"`.
    /\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^|\n;]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget)\b[^|\n;]{0,300}\|\s*(?:sudo\s+)?(?:python[0-9.]*|node|perl|ruby|php|iex|powershell|pwsh)\b/i,
    /\b(?:ba|z)?sh\s+(?:-c\s+)?["']?\s*(?:<\(|\$\()\s*(?:curl|wget)\b/i,
    /\b(?:eval|exec|source)\s+["']?\$\(\s*(?:curl|wget|echo|base64|printf)\b/i,
    // Encoded payloads decoded into a shell.
    /\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\|\s*base64\s+(?:-d|--decode|-D)\b|\bfrombase64string\b|\bpowershell\b[^\n]{0,40}\s-(?:e|enc|encodedcommand)\s/i,
    /\becho\s+["']?[A-Za-z0-9+/]{24,}={0,2}["']?\s*\|\s*(?:base64|openssl|xxd)\b/,
    // Destructive or privilege changes aimed at a whole tree or the system.
    /\brm\s+(?:-[a-z]*\s+)*-(?:rf|fr|r\s+-f|f\s+-r)[a-z]*\s+(?:--no-preserve-root\b|\/(?:\s|$|\*|\w)|~|\$HOME|\*|\.\.?(?:\s|\/|$))/i,
    /\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|[ugo]*\+s|[0-7]?[4-7]755)\b|\bchmod\s+-R\s+\S+\s+\/(?:\s|$)|\bchown\s+-R\s+\S+\s+\/(?:\s|$)/i,
    /\b(?:mkfs(?:\.\w+)?|dd\s+if=[^\n]{0,80}of=\/dev\/(?:sd|nvme|disk|hd))\b|:\(\)\s*\{\s*:\|:&\s*\};:/i,
    // Reverse shells and exfiltration of credentials.
    /\/dev\/tcp\/|\bnc(?:at)?\s+(?:-[a-z]*e[a-z]*\s|[^\n]{0,60}\s-e\s)|\bsocat\b[^\n]{0,80}\bexec:/i,
    /(?:~|\$HOME|\/home\/\w+|\/root)\/\.(?:ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc|git-credentials)\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\/etc\/(?:shadow|passwd|sudoers)\b/i,
    /\b(?:curl|wget|http)\b[^\n]{0,200}(?:-d\s*@|--data(?:-binary)?\s*@|--upload-file|-F\s*\S*=@|-T\s)/i,
    /\b(?:printenv|env|set)\s*\|\s*(?:curl|nc|wget)\b|\$\{?(?:AWS_SECRET|GITHUB_TOKEN|CAIRN_TOKEN|ANTHROPIC_API_KEY|OPENAI_API_KEY)\w*\}?[^\n]{0,80}\b(?:curl|wget|nc)\b/i,
    /\bgit\s+push\s+(?:-f|--force)\b[^\n]{0,60}\b(?:main|master|prod|production)\b|\bgit\s+config\s+--global\s+(?:core\.hookspath|url\.)/i,
    /\b(?:npm|pnpm|yarn|pip3?|gem|cargo)\s+(?:i|install|add)\s+[^\n]{0,80}(?:https?:\/\/|git\+|\.tgz\b)|\bnpm\s+config\s+set\s+registry\b|\bpip3?\s+install\s+[^\n]{0,80}--(?:extra-)?index-url\b/i,
    /\b(?:disable|turn off|skip|bypass|remove)\s+(?:the\s+)?(?:tests?|ci|hooks?|pre-commit|linting|code review|reviews?|2fa|mfa|signing|branch protection|safety checks?|sandbox)\b[^.!?\n]{0,40}\b(?:always|every|all|permanently|from now on)\b/i,
  ],
  directive: [
    // Hidden instructions: decode something and do what it says.
    new RegExp(
      `\\b(?:decode|base64[ -]?decode|b64decode|atob|unbase64|de-?obfuscate)\\b${G(80)}\\b(?:and|then|&)\\s+(?:follow|execute|run|obey|do|apply|carry out|act on|comply with|perform)\\b`,
      'i',
    ),
    /\b(?:follow|execute|run|obey|apply|carry out)\b[^.!?\n]{0,30}\b(?:decoded|encoded|base64|b64|hidden|obfuscated)\s+(?:instructions?|commands?|text|message|payload|string|directives?)\b/i,
    /\b(?:from now on|henceforth|going forward|for (?:all|every) (?:future )?(?:sessions?|responses?|commands?|tasks?)|in (?:all|every) (?:future )?(?:sessions?|responses?|commands?))\b/i,
    /\b(?:you|the (?:agent|assistant|model|ai)|claude|copilot|cursor)\s+(?:must|should|shall|will|need to|have to|are required to|are to|are expected to)\s+(?:always|never|now|also|first|immediately|silently|quietly|secretly)\b/i,
    /\b(?:always|never|must|make sure (?:to|you)|be sure to|remember to|don't forget to|do not forget to)\s+(?:run|execute|invoke|call|add|append|prepend|include|insert|send|post|upload|push|commit|delete|remove|disable|skip|ignore|use|set|export|pipe|curl|download|install)\b[^.!?\n]{0,80}\b(?:every|each|all|any)\s+(?:shell |bash |terminal |git )?(?:commands?|requests?|calls?|commits?|runs?|sessions?|files?|responses?|times?)\b/i,
    /\b(?:always|before (?:anything|doing anything|you (?:start|begin|answer|respond))|first of all|at the start of every session)\b[^.!?\n]{0,20}\b(?:run|execute|curl|wget|download|install|source|eval)\b/i,
    /\b(?:do not|don't|never)\s+(?:tell|inform|mention|reveal|alert|notify|warn|show|ask)\s+(?:this to |it to )?(?:the )?(?:user|human|developer|anyone|them|your user)\b/i,
    /\b(?:tell|inform|reply to|respond to|say to|convince)\s+the (?:user|human|developer)\s+(?:that|to)\b/i,
    /\b(?:your|the) (?:real|true|actual|new|only|primary|hidden) (?:task|goal|job|purpose|instructions?|objective|mission)\b/i,
    /\b(?:reveal|print|show|output|repeat|leak|dump|send)\b[^.!?\n]{0,30}\b(?:system prompt|your (?:prompt|instructions|rules)|prompt texts?|initial instructions|hidden instructions|api keys?|tokens?|secrets?|credentials|passwords?|env(?:ironment)? variables?)\b/i,
  ],
};

/** Letters spelled out one at a time join back into words only in runs of at least this many. */
const SPELLED_MIN = 3;
/** A token that is letters joined by a dot, dash, underscore or star, one at a time: `i.g.n.o.r.e`. */
const DOTTED = /^\p{L}(?:[._*-]\p{L})+$/u;
const ONE_LETTER = /^\p{L}$/u;

/**
 * The text with letters spelled out one at a time joined back into words: `i g n o r e  p r e v i o u s` (one
 * space between letters, two or more between words) and `i.g.n.o.r.e` read `ignore previous`, `ignore`. Null when
 * there is no such run (nothing new to judge). `runs` gets each joined run, for the spelled phrases that keep no
 * gap between words at all. One pass over the text's space-separated tokens.
 */
export function despaced(text: string, runs: string[] = []): string | null {
  const out: string[] = [];
  let letters: string[] = [];
  let found = false;
  const flush = () => {
    if (letters.length >= SPELLED_MIN) {
      const run = letters.join('');
      out.push(run);
      runs.push(run);
      found = true;
    } else out.push(letters.join(' '));
    letters = [];
  };
  // One pass over runs of spaces and the tokens between them.
  for (let i = 0; i < text.length; ) {
    let j = i;
    if (text[i] === ' ') {
      while (j < text.length && text[j] === ' ') j++;
      // One space separates spelled letters; a wider gap ends the word.
      if (j - i > 1 && letters.length) flush();
      if (!letters.length) out.push(' ');
    } else {
      while (j < text.length && text[j] !== ' ') j++;
      const token = text.slice(i, j);
      if (token.length <= 2 && ONE_LETTER.test(token)) letters.push(token);
      else if (token.length <= 200 && DOTTED.test(token)) letters.push(token.replace(/[._*-]/g, ''));
      else {
        if (letters.length) {
          flush();
          out.push(' ');
        }
        out.push(token);
      }
    }
    i = j;
  }
  if (letters.length) flush();
  return found ? out.join('').replace(/ +/g, ' ') : null;
}

/** Spelled-out overrides with no gap left between their words (`ignoreallpreviousinstructions`), per joined run. */
const SQUEEZED =
  /(?:ignore|disregard|forget|override|bypass)(?:all|any|every|the|your|of|these|those){0,3}(?:previous|prior|above|earlier|preceding|all|your|system)(?:instructions?|prompts?|rules?|guidelines?|directions?|context|messages?)|systemprompt|newinstructions|developermode|jailbreak|youarenow/i;

/** Base64 runs long enough to hide a sentence; at most a few are decoded, of bounded length, per text. */
const BASE64 = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const BASE64_RUNS = 8;
const BASE64_CHARS = 4_096;

/** The texts a few base64 runs of `text` decode to, when they decode to readable text (one level, bounded). */
export function decodedRuns(text: string): string[] {
  const out: string[] = [];
  let budget = BASE64_CHARS;
  for (const m of text.matchAll(BASE64)) {
    if (out.length >= BASE64_RUNS || budget <= 0) break;
    const run = m[0].slice(0, budget);
    budget -= run.length;
    let bytes: string;
    try {
      bytes = atob(run.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, ''));
    } catch {
      continue;
    }
    // Readable: printable ASCII, tabs and newlines, the rest at most a tenth (UTF-8 letters of other scripts).
    let readable = 0;
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes.charCodeAt(i);
      if ((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a) readable++;
    }
    if (bytes.length >= 12 && readable >= bytes.length * 0.9) out.push(bytes);
  }
  return out;
}

/** The kinds the rules find in already folded text. */
const kindsIn = (folded: string): InstructionKind[] =>
  INSTRUCTION_KINDS.filter((k) => RULES[k].some((re) => re.test(folded)));

/** NFKC first (full-width letters and brackets), then what a reader does not see is removed and look-alikes folded. */
const fold = (text: string) => foldMarkup(text.normalize('NFKC'));

/**
 * Flags text that reads as instructions to the agent. Every kind is tried (all are reported, so the author is
 * told every reason); work is linear in min(text length, CLASSIFY_MAX_CHARS): the text, its spelled-out letters
 * joined back, and a bounded few of its base64 runs decoded, each judged by the same rules.
 */
export function classifyInstructions(text: string): InstructionVerdict {
  if (!text) return { flagged: false, kinds: [] };
  const head = text.length > CLASSIFY_MAX_CHARS ? text.slice(0, CLASSIFY_MAX_CHARS) : text;
  const folded = fold(head);
  const found = new Set(kindsIn(folded.replace(/[ \t]+/g, ' ')));
  const runs: string[] = [];
  const joined = despaced(folded.replace(/\t/g, ' '), runs);
  if (joined !== null) for (const k of kindsIn(joined)) found.add(k);
  if (runs.some((r) => SQUEEZED.test(r))) found.add('override');
  for (const decoded of decodedRuns(folded)) {
    const plain = fold(decoded).replace(/[ \t]+/g, ' ');
    for (const k of kindsIn(plain)) found.add(k);
  }
  const kinds = INSTRUCTION_KINDS.filter((k) => found.has(k));
  return { flagged: kinds.length > 0, kinds };
}

/** The texts of a record that are judged together (title, subtitle, narrative, facts, concepts), joined by lines. */
export const recordText = (parts: readonly (string | null | undefined)[]): string =>
  parts.filter((p): p is string => !!p).join('\n');
