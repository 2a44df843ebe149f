/**
 * The user's own words in a prompt as an agent hands it to a hook. Pure.
 *
 * Agents put context blocks around what the user typed before a hook sees it: Gemini CLI's
 * BeforeAgent prompt is `<hook_context>…the SessionStart hooks' text (Baton's own)…</hook_context>`,
 * a blank line, then the user's words; Claude Code and Codex add blocks such as
 * `<system-reminder>`, `<environment_context>` or `<stdin>` (text piped into `codex exec`).
 * Rollback and unpause requests, and the lessons a prompt calls up, are about the words alone.
 *
 * Removed: every block of a tag agents use for injected context, wherever it is; and any other
 * `<tag>…</tag>` block that stands on lines of its own at the very start or end of the prompt.
 * A tag inside the user's sentence ("<b>undo</b> that") is theirs and stays.
 */

/** Tags the agents (and Baton, through them) wrap injected context in. */
const CONTEXT_TAGS = [
  "hook_context",
  "system-reminder",
  "system_reminder",
  "environment_context",
  "user_instructions",
  "untrusted_context",
  "additional_context",
  "ide_selection",
  "ide_opened_file",
];
const CONTEXT_BLOCK = new RegExp(`<(${CONTEXT_TAGS.join("|")})(?:\\s[^>]*)?>[\\s\\S]*?</\\1>`, "g");
/** A whole-line `<tag …>…</tag>` block at the start of the text (then a line break or the end). */
const LEADING_BLOCK = /^\s*<([a-z][a-z0-9_-]*)(?:\s[^>\n]*)?>[\s\S]*?<\/\1>[ \t]*(?:\r?\n|$)/i;
/** The same at the end of the text (after a line break or from the start). */
const TRAILING_BLOCK = /(?:^|\r?\n)[ \t]*<([a-z][a-z0-9_-]*)(?:\s[^>\n]*)?>[\s\S]*?<\/\1>\s*$/i;
/** Past this length only the known context tags are removed (the edge scans are quadratic at worst). */
const MAX_EDGE_SCAN = 20_000;
const MAX_SCAN = 1_000_000;

export function userWords(prompt: string): string {
  if (typeof prompt !== "string") return "";
  if (prompt.length > MAX_SCAN || !prompt.includes("<")) return prompt.trim();
  let text = prompt.replace(CONTEXT_BLOCK, "\n");
  if (text.length > MAX_EDGE_SCAN) return text.trim();
  for (let i = 0; i < 8; i++) {
    const next = text.replace(LEADING_BLOCK, "").replace(TRAILING_BLOCK, "");
    if (next === text) break;
    text = next;
  }
  return text.trim();
}
