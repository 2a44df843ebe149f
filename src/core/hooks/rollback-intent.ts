/**
 * Recognising a rollback request in a user's prompt, purely, for agent hooks: `/rollback`,
 * `/rollback 3`, `/rollback cp-1a2b`, "undo that", "revert that", "roll back two steps",
 * "roll back to cp-1a2b". A clause must be a whole command (an optional polite prefix, the
 * verb, its object, an optional "please"/"now"), so "don't undo that test", "how do I undo
 * that?" and "the undo button is broken" never fire. Only the user's own words count: context
 * blocks the agent put around them (core/hooks/prompt-words.ts) are removed first.
 */
import { userWords } from "./prompt-words.js";

export type RollbackIntent = { steps: number } | { to: string };

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  "a couple of": 2,
  "a few": 3,
};

const MAX_STEPS = 1_000;
const COUNT = "(\\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)";
const VERB = "(?:undo|revert|roll ?back|go back)";
const UNIT = "(?:steps?|changes?|edits?|turns?|writes?|times?)";
const ID = "(cp-[a-z0-9][a-z0-9._-]{0,63})";
const PREFIX =
  "^(?:(?:please|pls|ok|okay|hey|oops|ugh|argh|yes|yeah|no|nope|hmm|actually|just)\\s+)*(?:(?:can|could|would|will) you\\s+)?(?:please\\s+)?";
const SUFFIX = "(?:\\s+(?:please|pls|now|again|asap|for me))*$";

/** Clause grammars in order; each returns the intent for its match. */
const CLAUSES: { re: RegExp; intent: (m: RegExpExecArray) => RollbackIntent | undefined }[] = [
  // "roll back to cp-1a2b", "revert to checkpoint cp-1a2b", "restore checkpoint cp-1a2b"
  {
    re: new RegExp(`${PREFIX}(?:${VERB}|restore) (?:to )?(?:the )?(?:checkpoint |snapshot )?${ID}${SUFFIX}`),
    intent: (m) => ({ to: m[1] as string }),
  },
  // "roll back two steps", "undo the last 3 changes", "go back 2 steps", "undo that 2 times"
  {
    re: new RegExp(`${PREFIX}${VERB} (?:(?:that|it|this) )?(?:the |your )?(?:last |previous )?${COUNT} ${UNIT}(?: back)?${SUFFIX}`),
    intent: (m) => steps(m[1] as string),
  },
  // "undo that", "revert the last change", "roll back your last edit", "undo", "rollback"
  {
    re: new RegExp(
      `${PREFIX}${VERB}(?: (?:that|this|it|those changes|these changes|that change|this change|that edit|(?:the |your |my )?(?:last|latest|previous) (?:change|edit|step|write|turn)))?(?: back)?${SUFFIX}`,
    ),
    intent: () => ({ steps: 1 }),
  },
];

function steps(word: string): RollbackIntent | undefined {
  const n = /^\d+$/.test(word) ? Number(word) : NUMBER_WORDS[word];
  return n !== undefined && n >= 1 && n <= MAX_STEPS ? { steps: n } : undefined;
}

function slashCommand(text: string): RollbackIntent | undefined | null {
  const m = /^\/(rollback|undo)(?:\s+(.*))?$/.exec(text);
  if (!m) return null;
  const arg = (m[2] ?? "").trim().replace(/^--to\s+|^to\s+/, "");
  if (arg === "") return { steps: 1 };
  if (/^\d+$/.test(arg)) return steps(arg);
  const id = /^(cp-[a-z0-9][a-z0-9._-]{0,63})$/.exec(arg);
  return id ? { to: id[1] as string } : undefined;
}

/** The rollback a prompt asks for, or undefined when it asks for none. */
export function parseRollbackIntent(prompt: string): RollbackIntent | undefined {
  if (typeof prompt !== "string") return undefined;
  const text = userWords(prompt)
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, " ");
  if (text === "" || text.length > 2_000) return undefined;
  const slash = slashCommand(text);
  if (slash !== null) return slash;
  // Each clause (split at sentence punctuation and commas) must be a whole command.
  for (const raw of text.split(/[.!?;,:\n]+/)) {
    const clause = raw.trim();
    if (clause === "") continue;
    for (const c of CLAUSES) {
      const m = c.re.exec(clause);
      if (m) {
        const intent = c.intent(m);
        if (intent) return intent;
      }
    }
  }
  return undefined;
}
