/**
 * Commands Baton prints for an agent to run: every argument quoted for a POSIX shell, so a path
 * with a space, a `$` or a backtick reaches Baton as written and never expands. Placeholders
 * (`<how it was resolved>`) are what the agent must replace; the API refuses them as values, so
 * a command run exactly as printed never records one.
 */

import { badInput } from "../errors.js";

/** An argument as a POSIX shell reads it back unchanged: bare when safe, else single-quoted. */
export function shellQuote(arg: string): string {
  if (/^[\w./@%+=:,-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `baton` and its arguments, each quoted. */
export function batonCommand(...args: string[]): string {
  return ["baton", ...args.map(shellQuote)].join(" ");
}

/** A placeholder the agent was to replace: the whole value is `<…>`. */
export function isPlaceholder(text: string): boolean {
  return /^\s*<[^<>]*>\s*$/.test(text);
}

/**
 * A printed command's `<…>` placeholder, run without replacing it, records nothing: the value
 * is refused so the agent learns to ask for the real one.
 */
export function refusePlaceholder(what: string, value: string | undefined): void {
  if (value !== undefined && isPlaceholder(value))
    throw badInput(`the ${what} ${JSON.stringify(value)} is a placeholder from a printed command: replace it with the real text`);
}
