/**
 * Which path patterns Baton matches. Patterns come from files a repository ships (LESSONS.md's
 * `paths`, a flow's `generatedPaths`), and picomatch compiles a glob to a backtracking regular
 * expression: a pattern such as `*(*)*(*)*(*)*(*)#` takes minutes on a short name, and a few
 * plain stars in a row (`*(*(*(*(#`) take seconds on a long one, as do alternations in a row
 * (`{a,a}{a,a}…`). So extglobs are off, and a pattern has no `(`, `)` or `|`, at most one flat
 * `{…}` group, and at most MAX_STARS `*` wildcards besides whole `**` segments, which keeps the
 * worst case near a millisecond for any path a file system holds. A pattern outside these
 * limits is refused where it is read, with the reason.
 */

/** Wildcard `*`s (not counting whole `**` segments) a pattern may have. */
export const MAX_STARS = 2;
/** Whole `**` segments a pattern may have. */
export const MAX_GLOBSTARS = 2;
export const MAX_GLOB_LENGTH = 256;

/** The options every path-pattern matcher uses with picomatch. */
export const GLOB_OPTIONS = { dot: true, noextglob: true } as const;

/** Alternatives one `{…}` group may list. */
export const MAX_BRACE_ALTERNATIVES = 8;

/** Why Baton will not match with `glob`, or undefined when it will. */
export function globProblem(glob: string): string | undefined {
  if (glob.length > MAX_GLOB_LENGTH) return `a path pattern is at most ${MAX_GLOB_LENGTH} characters`;
  // picomatch compiles `(a|b)` and every `{a,b}` to an alternation, and alternations in a row
  // backtrack exponentially (26 × `{a,a}` takes seconds): no parentheses or bars, and one brace
  // group, flat, of a few alternatives (`*.{js,ts}`).
  if (/[()|]/.test(glob)) return 'a path pattern has no "(", ")" or "|" (it could take too long to match)';
  const braces = glob.match(/\{[^{}]*\}/g) ?? [];
  const opened = glob.split("{").length - 1;
  if (opened > 1 || braces.length !== opened || glob.split("}").length - 1 !== opened)
    return 'a path pattern has at most one "{…}" group, not nested (it could take too long to match)';
  if (braces[0] !== undefined && braces[0].split(",").length > MAX_BRACE_ALTERNATIVES)
    return `a path pattern's "{…}" group lists at most ${MAX_BRACE_ALTERNATIVES} alternatives`;
  let stars = 0;
  let globstars = 0;
  for (const segment of glob.split("/")) {
    if (segment === "**") globstars++;
    else stars += segment.split("").filter((c) => c === "*").length;
  }
  if (globstars > MAX_GLOBSTARS) return `a path pattern has at most ${MAX_GLOBSTARS} "**" segments (it could take too long to match)`;
  if (stars > MAX_STARS)
    return `a path pattern has at most ${MAX_STARS} "*" wildcards besides "**" segments (it could take too long to match)`;
  return undefined;
}
