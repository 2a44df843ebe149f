/**
 * Git's glob matching of paths (its `wildmatch` with `WM_PATHNAME`), for what git matches with
 * it outside ignore files: `includeIf "gitdir:…"` and `"onbranch:…"` in its configuration
 * (`git-config.ts`). On the UTF-8 bytes of both sides, as git: `?` is one byte but never `/`,
 * `*` any bytes but `/`, `**` between slashes (or at an end) any folders, none included, and
 * elsewhere one `*`; `[…]` a byte set (`!` or `^` negates it,
 * ranges, `[:alpha:]`-style classes, `\` escapes) that never matches `/`; `\` makes the next
 * byte literal. Every other byte is itself: `(`, `|`, `{`, `+` and a leading `!` mean nothing.
 * A pattern whose `[` set is not closed matches nothing. `casefold` folds ASCII letters (git's
 * `WM_CASEFOLD`, for `gitdir/i:`).
 *
 * Each (pattern, text) position is answered once, so the time is bounded by their product
 * whatever the stars (many of them against a long path).
 */

const SLASH = 0x2f;
const STAR = 0x2a;
const QUESTION = 0x3f;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const BACKSLASH = 0x5c;
const DASH = 0x2d;
const COLON = 0x3a;

const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => isUpper(c) || isLower(c);

/** The `[:name:]` classes git knows, over bytes as its C locale sees them. */
const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: isAlpha,
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: isDigit,
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: isLower,
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c),
  space: (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d, // git's own: not \v or \f
  upper: isUpper,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

/** Whether `text` matches the glob `pattern` as git's wildmatch with WM_PATHNAME says. */
export function wildmatch(pattern: string, text: string, casefold = false): boolean {
  const p = Buffer.from(pattern, "utf8");
  const t = Buffer.from(text, "utf8");
  const width = t.length + 1;
  const memo = new Uint8Array((p.length + 1) * width); // 0 not yet asked, 1 no, 2 yes
  const fold = (c: number) => (casefold && isUpper(c) ? c + 32 : c);

  const at = (pi: number, ti: number): boolean => {
    const k = pi * width + ti;
    const known = memo[k] as number;
    if (known !== 0) return known === 2;
    const r = from(pi, ti);
    memo[k] = r ? 2 : 1;
    return r;
  };

  /** Whether the pattern from `pi` matches the text from `ti` to its end. */
  const from = (pi0: number, ti0: number): boolean => {
    let pi = pi0;
    let ti = ti0;
    while (pi < p.length) {
      const pc = p[pi] as number;
      if (pc === STAR) return stars(pi, ti);
      if (ti >= t.length) return false;
      const tc = t[ti] as number;
      if (pc === QUESTION) {
        if (tc === SLASH) return false;
      } else if (pc === OPEN) {
        const set = bracket(pi, tc);
        if (set === undefined || !set.matched) return false;
        pi = set.end;
        ti++;
        continue;
      } else if (pc === BACKSLASH) {
        pi++;
        // A lone `\` at the end matches nothing; the byte escaped is not folded (as in git).
        if (pi >= p.length || (p[pi] as number) !== fold(tc)) return false;
      } else if (fold(pc) !== fold(tc)) return false;
      pi++;
      ti++;
    }
    return ti === t.length;
  };

  /** A run of `*` at `pi`: one `*` stays within a folder; `**` bordered by slashes or ends spans folders. */
  const stars = (pi: number, ti: number): boolean => {
    let q = pi + 1;
    let anyFolders = false;
    if (p[q] === STAR) {
      while (p[q] === STAR) q++;
      const before = pi === 0 || p[pi - 1] === SLASH;
      const next = p[q];
      const after = next === undefined || next === SLASH || (next === BACKSLASH && p[q + 1] === SLASH);
      anyFolders = before && after;
      // `**/` also matches no folder at all.
      if (anyFolders && next === SLASH && at(q + 1, ti)) return true;
    }
    if (q === p.length) return anyFolders || !t.subarray(ti).includes(SLASH);
    for (let i = ti; i <= t.length; i++) {
      if (at(q, i)) return true;
      if (i < t.length && !anyFolders && t[i] === SLASH) return false;
    }
    return false;
  };

  /** The `[…]` set opening at `pi`, judged for the byte `tc`: whether it matches, and where the pattern goes on; undefined when it never closes (or names no class git knows). */
  const bracket = (pi: number, tc0: number): { matched: boolean; end: number } | undefined => {
    const tc = fold(tc0);
    let i = pi + 1;
    let negated = false;
    if (p[i] === 0x21 || p[i] === 0x5e) {
      negated = true;
      i++;
    }
    let matched = false;
    let prev = 0; // the byte before, for a range (0: none)
    let first = true;
    for (;;) {
      let c = p[i];
      if (c === undefined) return undefined;
      if (c === CLOSE && !first) break;
      first = false;
      if (c === BACKSLASH) {
        i++;
        c = p[i];
        if (c === undefined) return undefined;
        if (tc === c) matched = true;
        prev = c;
      } else if (c === DASH && prev !== 0 && p[i + 1] !== undefined && p[i + 1] !== CLOSE) {
        i++;
        let hi = p[i] as number;
        if (hi === BACKSLASH) {
          i++;
          if (p[i] === undefined) return undefined;
          hi = p[i] as number;
        }
        if (tc <= hi && tc >= prev) matched = true;
        else if (casefold && isLower(tc) && tc - 32 <= hi && tc - 32 >= prev) matched = true;
        prev = 0;
      } else if (c === OPEN && p[i + 1] === COLON) {
        let j = i + 2;
        while (p[j] !== undefined && p[j] !== CLOSE) j++;
        if (p[j] === undefined) return undefined;
        if (j - (i + 2) - 1 < 0 || p[j - 1] !== COLON) {
          // No `:]`: a plain `[` in the set.
          if (tc === OPEN) matched = true;
          prev = OPEN;
        } else {
          const name = p.toString("latin1", i + 2, j - 1);
          const test = Object.hasOwn(CLASSES, name) ? CLASSES[name] : undefined; // not `constructor`, `__proto__`…
          if (test === undefined) return undefined;
          if (test(tc) || (casefold && name === "upper" && isLower(tc))) matched = true;
          prev = 0;
          i = j;
        }
      } else {
        if (tc === c) matched = true;
        prev = c;
      }
      i++;
    }
    return { matched: matched !== negated && tc0 !== SLASH, end: i + 1 };
  };

  return at(0, 0);
}
