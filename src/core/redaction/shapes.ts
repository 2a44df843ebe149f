/**
 * Redaction rules for shapes that are not anchored at one name: key blocks, passwords in URLs,
 * command lines and SQL, password hashes, `.pgpass` lines, name/value pairs, XML elements,
 * high-entropy environment values and card numbers. Pure.
 *
 * Each runs over the whole text, and only when the scan saw its literal or operator (`://` and
 * `@`, `-p` and a client's name, `$`, `</`, 13 digits in a row, ...), which few texts hold.
 *
 * Longer than the house's ~400 lines: the rules of one stage, which grows by rules.
 */
import { entropy, literalSecret, luhn, placeholderish, randomLooking, secretPair, tag, versionLike } from "./judge.js";
import { charCode, isWord, type Pass } from "./pass.js";
import { M, W } from "./scan.js";

/** One rule over the whole text: its pattern and, per match, the span it claims and what replaces it (none: keep). */
interface Shape {
  gate: (p: Pass) => boolean;
  /**
   * Marks (`M`) and words (`W`) one of which every text the gate lets through holds (what the
   * gate asks first): the pipeline tests them before it calls the shape at all, since most
   * texts hold none (core/redaction/text.ts).
   */
  need: readonly [marks: number, words: number];
  re: RegExp;
  claim: (m: RegExpExecArray, p: Pass) => readonly [start: number, end: number, by: string] | undefined;
  /**
   * Set when every match lies inside one run of the scan (core/redaction/scan.ts) and holds a `=`:
   * the pattern is tried only in the runs at least this long that hold one, each on its own (the
   * break characters around a run end every match alike), and `claim` sees a match in the run.
   */
  inRuns?: number;
  /**
   * Set for the URL shapes, whose every match starts with a scheme (a letter at a word boundary,
   * then [A-Za-z0-9+.-], 2 to 32 characters in all) and `://`: the pattern, sticky, is tried only
   * at the scheme starts before each `://`, leftmost first (`atSchemes`). The same matches as a
   * search over the whole text, which tried every character of it.
   */
  sticky?: RegExp;
  /**
   * With `inRuns`: whether the run [start, end) of `text` may hold a match, a cheaper test than
   * the pattern, run before it (`highEntropy`: a `=` right after a name's last character).
   */
  runMay?: (text: string, start: number, end: number) => boolean;
}

function apply(p: Pass, s: Shape): void {
  if (!s.gate(p)) return;
  if (s.sticky !== undefined) {
    atSchemes(p, s, s.sticky);
    return;
  }
  if (s.inRuns === undefined) {
    applyIn(p, s, p.text, 0);
    return;
  }
  const r = p.scan.runs;
  let eq = -1; // the first `=` at or after the run's start (found again only once passed: one search per `=`, not per run)
  for (let k = 0; k < r.length; k += 2) {
    const start = r[k] as number;
    const end = r[k + 1] as number;
    if (end - start < s.inRuns) continue;
    if (eq < start) eq = p.text.indexOf("=", start);
    if (eq < 0) return;
    if (eq < end && (s.runMay === undefined || s.runMay(p.text, start, end))) applyIn(p, s, p.text.slice(start, end), start);
  }
}

/** The sticky copy of a global pattern. */
const sticky = (re: RegExp) => new RegExp(re.source, re.flags.replace("g", "y"));
const schemeChar = (c: number) => (isWord(c) ? c !== 95 : c === 43 || c === 46 || c === 45);
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** The matches of a URL shape (`Shape.sticky`): at each `://`, the scheme starts before it, leftmost first. */
function atSchemes(p: Pass, s: Shape, re: RegExp): void {
  const { text } = p;
  let last = 0; // where the last match ended: the next starts no earlier
  for (let q = text.indexOf("://"); q >= 0; q = text.indexOf("://", q + 3)) {
    let b = q;
    while (b > 0 && q - b < 32 && schemeChar(charCode(text, b - 1))) b--;
    for (let at = Math.max(b, last); at <= q - 2; at++) {
      if (!isLetter(charCode(text, at)) || isWord(charCode(text, at - 1))) continue;
      re.lastIndex = at;
      const m = re.exec(text);
      if (m === null) continue;
      const c = s.claim(m, p);
      if (c !== undefined) p.claim(c[0], c[1], c[2]);
      last = at + m[0].length;
      break;
    }
  }
}

/** The shape's matches in `text`, which stands at `at` in the pass's text. */
function applyIn(p: Pass, s: Shape, text: string, at: number): void {
  const { re } = s;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const c = s.claim(m, p);
    if (c !== undefined) p.claim(at + c[0], at + c[1], c[2]);
  }
}

/** Claim group n of a match whose groups 1..n follow one another with nothing between them. */
const group = (m: RegExpExecArray, n: number, by: string): readonly [number, number, string] => {
  let at = m.index;
  for (let g = 1; g < n; g++) at += (m[g] ?? "").length;
  return [at, at + (m[n] as string).length, by];
};

const has = (marks: number) => (p: Pass) => (p.scan.marks & marks) === marks;

/** A block with or without its END line (a cut or escaped block still goes). */
export const privateKey: Shape = {
  gate: (p) => (p.scan.words & W.PRIVATE) !== 0 && p.text.includes("PRIVATE KEY"),
  need: [0, W.PRIVATE],
  re: /-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|$)/g,
  claim: (m) => [m.index, m.index + m[0].length, tag("private-key")],
};

/** A PuTTY .ppk file's private part: `Private-Lines: N` and the base64 lines after it. */
export const puttyKey: Shape = {
  gate: (p) => (p.scan.words & W.PUTTY) !== 0,
  need: [0, W.PUTTY],
  re: /(Private-Lines:[ \t]*\d+[ \t]*\r?\n)(?:[A-Za-z0-9+/=]+(?:\r?\n|$))+/gi,
  claim: (m) => [m.index + (m[1] as string).length, m.index + m[0].length, `${tag("private-key")}\n`],
};

/**
 * `scheme://user:<password>@host`. Users write passwords into URLs unencoded, so the password may
 * hold what a URL would end its authority at: `#`, `?`, `/` (`openssl rand -base64` makes
 * `postgres://app:Ab3/xY+zQ9kL@db/app`). Without `/` or `?` it runs to the last `@` before one
 * (`p@ss#w0rd` is one password); holding one, to the first `@` (one in a path or query after
 * it is not the password's). Not a password, and not matched (so a URL inside it is still
 * tried): after the `:`, a port or a port's variable and then `/`, `?` or `#/`
 * (`http://localhost:3000?email=bob@example.com`, `http://localhost:$PORT/users/bob@x.com`), or
 * a path (`file://C:/Users/me/@types`); an IPv6 host (`http://[::1]:5173/@vite/client`) is no
 * user.
 */
const URL_PASSWORD =
  /\b([a-z][a-z0-9+.-]{1,31}:\/\/)([^\s:@/?#"'<>[\]]{0,256}):(?!(?:\d{1,5}|\$\{?\w+\}?)(?:[/?]|#[/?#])|\/)([^\s/?"'<>]{1,256}|[^\s@"'<>]{1,256})@/gi;

export const urlPassword: Shape = {
  gate: has(M.URL | M.AT),
  need: [M.URL, 0],
  re: URL_PASSWORD,
  sticky: sticky(URL_PASSWORD),
  claim: (m) => {
    const pass = m[3] as string;
    if (placeholderish(pass)) return undefined;
    const s = m.index + (m[1] as string).length + (m[2] as string).length + 1;
    return [s, s + pass.length, tag("password")];
  },
};

/**
 * The argument of `-u`/`--user` as the shell reads it, quotes joined (`"user":"pass"`,
 * `kevin:'pass'`, `"token:"`): its characters and where each stands in the text.
 */
function shellWord(text: string, at: number): { chars: string; pos: number[] } {
  let chars = "";
  const pos: number[] = [];
  let quote = 0;
  let opened = 0; // how many characters the word held when the open quote opened
  let i = at;
  for (; i < text.length && i - at < 512; i++) {
    const c = text.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
      else if (c === 10 || c === 13) break;
      else {
        chars += text[i];
        pos.push(i);
      }
    } else if (c === 34 || c === 39) {
      quote = c;
      opened = chars.length;
    } else if (c === 32 || c === 9 || c === 10 || c === 13 || c === 96) break;
    else {
      chars += text[i];
      pos.push(i);
    }
  }
  // A quote left open is the text's, not the word's (`"--user=bob:pw",` in a list): the word ends there.
  if (quote !== 0) return { chars: chars.slice(0, opened), pos: pos.slice(0, opened) };
  return { chars, pos };
}

/**
 * curl/wget/httpie style `-u user:password`, `--user user:password`, `--proxy-user u:p`, quoted
 * in any way the shell allows (`--user kevin:'pw'`, `"user":"pw"`), and `-u token:` (a token as
 * the user, no password: Stripe's and many APIs' basic auth). Not `-u 1000:1000` (a uid and gid).
 */
export const userPassword: Shape = {
  // `-u`, `--user` and `--proxy-user` hold `-u`; `--http-password` holds `-p`, as do most
  // command lines (`mkdir -p`, `-p 8080:80`), so that one is looked for itself.
  gate: (p) => (p.scan.marks & M.DASH_U) !== 0 || ((p.scan.marks & M.DASH_P) !== 0 && p.text.includes("--http-password")),
  need: [M.DASH_U | M.DASH_P, 0],
  re: /(?<![\w-])(?:-u|--user|--proxy-user|--http-password)(?:[ \t]+|=)(?=[^\s-])/g,
  claim: (m, p) => {
    const { chars, pos } = shellWord(p.text, m.index + m[0].length);
    const colon = chars.indexOf(":");
    if (colon < 0) return undefined;
    const user = chars.slice(0, colon);
    const pass = chars.slice(colon + 1);
    if (pass === "") {
      // `-u token:`: the user is the credential when it looks generated.
      if (user.length < 12 || !/\d/.test(user) || !/[A-Za-z]/.test(user) || placeholderish(user)) return undefined;
      return [pos[0] as number, (pos[colon - 1] as number) + 1, tag("password")];
    }
    // `<user:password>`, as a tool's help writes it, is a placeholder; `1000:1000` is a uid and gid.
    // `$2`, `$PASSWORD`, `${PASS}` are the shell's variables.
    if (placeholderish(pass) || pass.startsWith("$") || (user.startsWith("<") && pass.endsWith(">")) || /^\d+:\d+$/.test(chars))
      return undefined;
    return [pos[colon + 1] as number, (pos[pos.length - 1] as number) + 1, tag("password")];
  },
};

/**
 * `mysql -pSECRET` (glued, as the MySQL clients take it), `sshpass -p SECRET`, `docker login -p SECRET`.
 * The middle is bounded: unbounded, it rescanned to the line's end from every `login`/`mysql` (quadratic).
 */
export const cliPassword: Shape = {
  gate: (p) => (p.scan.marks & M.DASH_P) !== 0 && (p.scan.words & W.CLIENT) !== 0,
  need: [M.DASH_P, 0],
  re: /\b(mysql\w*|mariadb[\w-]*|sshpass|login)\b([^\r\n|;&]{0,200}?[ \t])(-p)([ \t]*)(["']?)(-?[^\s"'`-][^\s"'`]*)\5/g,
  claim: (m) => {
    const [, cmd, , , sp, , v] = m as unknown as [string, string, string, string, string, string, string];
    const glued = sp === "";
    if (glued !== cmd.toLowerCase().startsWith("m") || placeholderish(v)) return undefined;
    if (v.startsWith("-") && (v.length < 12 || !/\d/.test(v))) return undefined; // the next flag, not a password that starts with `-`
    return group(m, 6, tag("password"));
  },
};

/**
 * SQL `IDENTIFIED BY '…'` and `PASSWORD '…'`. Not a quoted key (`'password': 'x'` in a Python
 * dict is the assignment rule's): there the first "value" would be the `': '` between key and
 * value, and the secret would stay.
 */
export const sqlPassword: Shape = {
  gate: (p) => (p.scan.marks & M.SQUOTE) !== 0 && (p.scan.words & (W.IDENTIFIED | W.PASSWORD)) !== 0,
  need: [M.SQUOTE, 0],
  re: /\b(IDENTIFIED[ \t]+BY|(?<!['"])PASSWORD(?!['"]))([ \t]*=?[ \t]*)'(?![ \t]*[:,])([^'\r\n]{1,256})'/gi,
  claim: (m) => {
    if (placeholderish(m[3] as string)) return undefined;
    const [s, e] = group(m, 3, "");
    return [s + 1, e + 1, tag("password")];
  },
};

/**
 * Whether a `$` in the text is followed by a character a hash's first field starts with (`1`,
 * `5`, `6`, `apr1`, `2a`…`2y`, `y`, `argon2`): most `$` are a shell's (`$TOKEN`, `$(…)`, `${…}`),
 * and the pattern need not search those texts.
 */
function hashSigil(text: string): boolean {
  for (let i = text.indexOf("$"); i >= 0; i = text.indexOf("$", i + 1)) {
    const c = charCode(text, i + 1);
    if (c === 49 || c === 50 || c === 53 || c === 54 || c === 97 || c === 121) return true; // 1 2 5 6 a y
  }
  return false;
}

/** htpasswd and /etc/shadow entries, bcrypt/argon2 hashes: an offline-crackable password. */
export const passwordHash: Shape = {
  gate: (p) => (p.scan.marks & M.DOLLAR) !== 0 && hashSigil(p.text),
  need: [M.DOLLAR, 0],
  re: /(?<![\w$])\$(?:(?:apr1|1|5|6)\$[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{20,}|2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}|y\$[./A-Za-z0-9]+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{20,}|argon2(?:id|i|d)\$v=\d+\$[^$\s]+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]{16,})/g,
  claim: (m) => [m.index, m.index + m[0].length, tag("password-hash")],
};

/** A .pgpass line: host:port:database:user:password, the whole line. */
export const pgpass: Shape = {
  // A port field (or `*`), which the scan looks for at each colon: few texts with four colons have one.
  gate: (p) => p.scan.colons >= 4 && (p.scan.marks & M.PORT) !== 0,
  need: [M.PORT, 0],
  re: /^([^\s:#]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:)([^\s:]{4,256})[ \t]*$/gm,
  claim: (m) => (placeholderish(m[2] as string) ? undefined : group(m, 2, tag("password"))),
};

/** `https://<token>@github.com`: a token as the user name, no colon. */
const URL_USER_TOKEN = /\b([a-z][a-z0-9+.-]{1,31}:\/\/)([A-Za-z0-9_-]{20,256})@/gi;

export const urlUserToken: Shape = {
  gate: has(M.URL | M.AT),
  need: [M.URL, 0],
  re: URL_USER_TOKEN,
  sticky: sticky(URL_USER_TOKEN),
  claim: (m) => {
    const user = m[2] as string;
    return /\d/.test(user) && /[A-Za-z]/.test(user) && entropy(user) >= 3 ? group(m, 2, tag("token")) : undefined;
  },
};

/**
 * `echo pw | docker login --password-stdin`, `echo pw | sudo -S apt update` (`-kS`, `-u bob -S`,
 * `--stdin`): what is echoed is the password.
 */
export const passwordStdin: Shape = {
  gate: (p) => (p.scan.words & W.STDIN) !== 0,
  need: [0, W.STDIN],
  re: /\b(echo|printf)([ \t]+(?:-[ne][ \t]+|'%s(?:\\n)?'[ \t]+|"%s(?:\\n)?"[ \t]+)?)(["']?)([^\s|"'$]{1,256})\3([ \t]*\|[ \t]*[^\r\n|]{0,200}?(?:--password-stdin|\bsudo(?:[ \t]+-[^\s]+(?:[ \t]+[^\s-][^\s]*)?)*?[ \t]+(?:-[A-Za-z]*S[A-Za-z]*|--stdin)(?=\s|$)))/g,
  claim: (m) => (placeholderish(m[4] as string) ? undefined : group(m, 4, tag("password"))),
};

/** <add key="API_TOKEN" value="…"/>, `- name: API_TOKEN` / `value: …` (Kubernetes env, HAR headers) */
export const nameValue: Shape = {
  gate: (p) => (p.scan.words & W.VALUE) !== 0 && (p.scan.words & (W.NAME | W.HINT)) !== 0 && p.scan.names.length > 0,
  need: [0, W.VALUE],
  re: /\b(key|name)(["']?[ \t]*[=:][ \t]*)(["']?)([A-Za-z0-9_.-]{1,64})\3([ \t,]*\r?\n?[ \t]*["']?)(value)(["']?[ \t]*[=:][ \t]*)("[^"\r\n]*"|'[^'\r\n]*'|[^\s,}>/]+)/gi,
  claim: (m) => {
    const name = m[4] as string;
    const v = m[8] as string;
    const bare = v.replace(/^["']|["']$/g, "");
    if (!secretPair(name, bare) || !literalSecret(bare, name)) return undefined;
    const vq = /^["']/.test(v) ? (v[0] as string) : "";
    const end = m.index + m[0].length;
    return [end - v.length, end, `${vq}${tag("secret")}${vq}`];
  },
};

/** `<password>…</password>`, the value on the element's line or on a line of its own (`<apiToken>\n    …\n</apiToken>`) */
export const xmlElement: Shape = {
  gate: (p) => (p.scan.marks & M.CLOSE_TAG) !== 0 && p.scan.names.length > 0,
  need: [M.CLOSE_TAG, 0],
  re: /<([A-Za-z_][\w.:-]{0,63})>(\s{0,256})([^<>\s]{1,4096})\s{0,256}<\/\1>/g,
  claim: (m) => {
    const name = m[1] as string;
    const v = m[3] as string;
    if (!secretPair(name, v) || !literalSecret(v, name)) return undefined;
    const vs = m.index + name.length + 2 + (m[2] as string).length;
    return [vs, vs + v.length, tag("secret")];
  },
};

/** [A-Z0-9_] */
const constantChar = (c: number) => (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/**
 * Whether a `=` in the run [start, end) has three characters of a constant's name before it
 * (`[A-Z0-9_]` last), as every high-entropy match has: most `=` in a run are a URL's parameters
 * (`?page=2`) or base64 padding after lowercase, and the pattern need not look there.
 */
function nameBeforeEq(text: string, start: number, end: number): boolean {
  for (let q = text.indexOf("=", start + 3); q >= 0 && q < end; q = text.indexOf("=", q + 1))
    if (constantChar(text.charCodeAt(q - 1))) return true;
  return false;
}

/**
 * An environment-style assignment of a random-looking value whose name does not say "secret".
 * Every character of a match is a run's (core/redaction/scan.ts), so the pattern is tried only in
 * the runs of 24 or more characters that hold a `=` (`applyInRuns`).
 */
export const highEntropy: Shape = {
  gate: has(M.RUN_EQ),
  need: [M.RUN_EQ, 0],
  inRuns: 24,
  runMay: nameBeforeEq,
  re: /(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]{2,63})=([A-Za-z0-9+/=_\-.~]{20,})(?![A-Za-z0-9+/=_\-.~])/g,
  claim: (m) => {
    const v = m[2] as string;
    if (/^[0-9a-f-]+$/i.test(v) || /^[\d.]+$/.test(v)) return undefined; // hex hashes, UUIDs, versions
    if (!(/[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v)) || entropy(v) < 3.5) return undefined;
    const vs = m.index + (m[1] as string).length + 1;
    return [vs, vs + v.length, tag("high-entropy")];
  },
};

/**
 * A dotenv file's content (`.env`, `.env.production`): a text every line of which (blank lines
 * and `#` comments aside) is `KEY=value` under a variable's name (CONSTANT or snake_case, as
 * some projects write them), `export ` allowed. No file path reaches the redactor (a tool's
 * output, a checkpoint's diff, an observation are texts), so the text's own shape is what says
 * "dotenv". With two lines or more every value is taken whatever its name (`SERVICE_VALUE=…`),
 * unless it is plainly not a secret (`dotenvPlain`); a text of one such line under a CONSTANT
 * name (`cat .env` of a one-line file, an `env` filtered by `grep`) only a value that looks
 * generated (`randomLooking`): one line could as well be an ordinary setting (`primaryKey=…`).
 */
const DOTENV_LINE =
  /[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]{0,63})=[ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^\s#"'][^\s]*)?)[ \t]*(?:#[^\r\n]*)?(?=\r?\n|$)/y;

/**
 * A dotenv value that is plainly not a secret: empty, a number, a size or duration, a boolean,
 * a word or words (`production`, `info`, `eu-west-1`, `db.internal`, `svc_reporting`), a
 * version, an address (`10.0.3.17:5432`), a path, an e-mail address, a URL (its password, if
 * any, is the URL rule's), a template or a reference to another variable (`${HOST}`).
 */
function dotenvPlain(v: string): boolean {
  return (
    v.length < 6 ||
    placeholderish(v) ||
    v.includes("://") ||
    v.startsWith("$") ||
    /^(?:true|false|yes|no|on|off|null|none|nil)$/i.test(v) ||
    /^[+-]?\d+(?:\.\d+)*(?:[a-z]{1,3}|%)?$/i.test(v) ||
    /^[A-Za-z]+(?:[-_. ][A-Za-z]+)*(?:-\d{1,2})?$/.test(v) ||
    /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}(?::\d{1,5})?$/.test(v) || // a host: its last label is a word (`pat.0zom….32zal…` is a token)
    /^\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?$/.test(v) ||
    /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/.test(v) ||
    /^(?:[/~]|\.\.?\/)[\w./-]*$/.test(v) ||
    versionLike(v)
  );
}

/** Whether the line starting at `at` is blank or a comment; its end otherwise (-1). */
function dotenvSkip(text: string, at: number): number {
  let j = at;
  while (j < text.length && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9 || text.charCodeAt(j) === 13)) j++;
  if (j >= text.length || text.charCodeAt(j) === 10) return j;
  if (text.charCodeAt(j) !== 35) return -1;
  const e = text.indexOf("\n", j);
  return e < 0 ? text.length : e;
}

/**
 * A text of one line the dotenv rule may take: a CONSTANT's name and an unquoted value long
 * enough to look generated. Asked first: most one-line texts with a `=` are code or logs, and
 * reading them as a dotenv file cost 2.6% of a pass over the corpus.
 */
const ONE_DOTENV_LINE = /^[ \t]*(?:export[ \t]+)?[A-Z_][A-Z0-9_]{0,63}=[^\s"'#]{16,}[ \t]*$/;

export const dotenv: Shape = {
  // Read line by line by `claim` (the pattern is a formality: one match, the whole text): most
  // texts with a `=` and a line break are code, whose first line turns them away.
  gate: (p) => (p.scan.marks & M.EQ) !== 0 && (p.text.includes("\n") || ONE_DOTENV_LINE.test(p.text)),
  need: [M.EQ, 0],
  re: /^[\s\S]/g,
  claim: (m, p) => {
    if (m.index !== 0) return undefined;
    const { text } = p;
    const spans: number[] = [];
    const values: string[] = [];
    let lines = 0;
    let constant = false; // whether the last line's name is a CONSTANT's
    for (let at = 0; at <= text.length; ) {
      let end = dotenvSkip(text, at);
      if (end < 0) {
        DOTENV_LINE.lastIndex = at;
        const l = DOTENV_LINE.exec(text);
        if (l === null) return undefined;
        lines++;
        constant = /^[A-Z_][A-Z0-9_]*$/.test(l[1] as string);
        end = at + l[0].length;
        const v = l[2] ?? l[3] ?? l[4];
        if (v !== undefined && !dotenvPlain(v)) {
          const vs = text.indexOf(v, at + l[0].indexOf("=") + 1);
          spans.push(vs, vs + v.length);
          values.push(v);
        }
      }
      if (end >= text.length) break;
      at = end + 1;
    }
    if (lines === 0 || (lines === 1 && !(values.length === 1 && constant && randomLooking(values[0] as string)))) return undefined;
    for (let k = 0; k < spans.length; k += 2) p.claim(spans[k] as number, spans[k + 1] as number, tag("secret"));
    return undefined;
  },
};

/** The characters of a cloud secret key: [A-Za-z0-9/+]. */
const keyChar = (c: number) => alnumCode(c) || c === 47 || c === 43;
const alnumCode = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Whether 40 base64 characters decode to printable ASCII text (a sentence, a tokenizer's rank table): encoded text, not a key. */
function base64Text(v: string): boolean {
  const bytes = atob(v);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes.charCodeAt(i);
    if (b < 32 || b > 126) return false;
  }
  return true;
}

/**
 * A bare 40-character cloud secret key (an AWS secret access key's shape, `[A-Za-z0-9/+]{40}`) in
 * free text, whatever is around it ("rotate to wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY tonight"):
 * a run of the scan that is exactly 40 such characters (a `(` before, one of `.,:;!?)` after at
 * most), with lower and upper case letters and a digit, at least 4.3 bits of entropy per
 * character (99.9% of random keys have more; identifiers and words far less) and not base64 of
 * printable text. Over 93 MB of installed packages and this repository's sources, no
 * 40-character run but planted and documented example keys passes (docs/redaction.md).
 */
export function bareCloudKey(p: Pass): void {
  const r = p.scan.runs;
  const { text } = p;
  for (let k = 0; k < r.length; k += 2) {
    let s = r[k] as number;
    let e = r[k + 1] as number;
    if (e - s < 40 || e - s > 42) continue;
    if (charCode(text, s) === 40) s++;
    while (e - s > 40 && ".:!?)".includes(text[e - 1] as string)) e--;
    if (e - s !== 40) continue;
    if (cloudKey(text, s, e)) p.claim(s, e, tag("cloud-secret-key"));
  }
}

/** A URL's path character, as this rule reads one: what stops it is what ends a URL in text (`?`, `#`, spaces, quotes, brackets). */
const pathChar = (c: number) =>
  c > 32 && c < 127 && c !== 63 && c !== 35 && c !== 34 && c !== 39 && c !== 96 && c !== 60 && c !== 62 && c !== 92;
/** [A-Za-z0-9_-]: a path segment's token characters. */
const segmentChar = (c: number) => alnumCode(c) || c === 95 || c === 45;

/**
 * Whether a whole path segment looks generated: 24 or more token characters, two digits, a run
 * of 16 letters and digits with both cases and a digit in it, at least 4 bits of entropy per
 * character (random base62 of 24 has about 4.3; a slug, an identifier or a name far less; the
 * mixed run leaves hex ids, UUIDs, lowercase slugs and a title's words before an id out:
 * `Pianificazione-Nerdz-1bc826ecc0994dd8915be97fc3489cde`).
 */
function generatedSegment(text: string, s: number, e: number): boolean {
  if (e - s < 24 || e - s > 256) return false;
  let digits = 0;
  let mixedRun = false; // a run of 16 letters and digits (between `-` and `_`) with both cases and a digit: a title's slug and a hex id have none
  let run = 0;
  let runMarks = 0; // 1: lower, 2: upper, 4: digit
  for (let i = s; i <= e; i++) {
    const c = i < e ? text.charCodeAt(i) : 45;
    if (!segmentChar(c)) return false;
    if (c === 45 || c === 95) {
      if (run >= 16 && runMarks === 7) mixedRun = true;
      run = 0;
      runMarks = 0;
      continue;
    }
    run++;
    if (c >= 97) runMarks |= 1;
    else if (c >= 65) runMarks |= 2;
    else {
      runMarks |= 4;
      digits++;
    }
  }
  return mixedRun && digits >= 2 && entropy(text.slice(s, e)) >= 4;
}

/**
 * A token in a URL's path with no provider's prefix (`https://api.example.com/hooks/4b1dbRdW…/notify`,
 * a webhook's or a share link's secret part): a whole segment that looks generated
 * (`generatedSegment`); and a 40-character cloud secret key whose own `/` splits it across
 * segments (`/hooks/wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY/notify`): 40 characters between two
 * `/` (or the path's end) that pass the bare cloud key's tests. Only in a URL (after `://` and a
 * host): a file's path is words, and no key is written into one. Measured on the installed
 * packages' text (docs/redaction.md).
 */
export function urlPathToken(p: Pass): void {
  const { text } = p;
  // Each character is read once: a `://` inside a path already read (`/redirect/https://…`) is part of it.
  for (let q = text.indexOf("://"); q >= 0; ) {
    let i = q + 3;
    while (i < text.length && pathChar(text.charCodeAt(i)) && text.charCodeAt(i) !== 47) i++; // the host
    let end = i;
    while (end < text.length && pathChar(text.charCodeAt(end))) end++;
    q = text.indexOf("://", Math.max(end, q + 3));
    if (charCode(text, i) !== 47 || end - i <= 24) continue; // no path, or none long enough to hold either
    // Segments: [s, t) between slashes; at each segment's start, also 40 characters that hold a
    // `/` and end at one or at the path's end (a cloud key across segments).
    for (let s = i + 1; s < end; ) {
      let t = text.indexOf("/", s);
      if (t < 0 || t > end) t = end;
      // Not a document's id after `/d/` (Google Docs, Sheets, Drive: who may open it is its sharing's business, and the link is what a reader follows).
      if (t - s >= 24 && generatedSegment(text, s, t) && !(s >= 3 && text.startsWith("/d/", s - 3))) p.claim(s, t, tag("url-path-token"));
      const e = s + 40;
      if (t < e && e <= end && (e === end || text.charCodeAt(e) === 47) && cloudKey(text, s, e)) p.claim(s, e, tag("cloud-secret-key"));
      s = t + 1;
    }
  }
}

/** Whether text[s, e) passes a bare cloud secret key's tests: its characters, both cases and a digit, 4.3 bits a character, not base64 of text. */
function cloudKey(text: string, s: number, e: number): boolean {
  let lower = false;
  let upper = false;
  let digit = false;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i);
    if (!keyChar(c)) return false;
    if (c >= 97) lower = true;
    else if (c >= 65) upper = true;
    else if (c >= 48) digit = true;
  }
  if (!lower || !upper || !digit) return false;
  const v = text.slice(s, e);
  return entropy(v) >= 4.3 && !base64Text(v);
}

/** Words that say the number after them is a card. */
const CARD_CONTEXT = /card|\bcc|\bpan\b|visa|master|amex|discover|credit|debit|payment|billing|cvv|\bacct|account/i;

/** Words that say the number after them is an id, a count or a code, not a card (the last word before it). */
const ID_BEFORE =
  /(?:\b(?:ids?|no|nr|num|order|orders|trace|span|request|req|invoice|ticket|build|job|run|seq|sequence|tx|txn|hash|user|uid|pid|offset|size|bytes|ts|time|timestamp|epoch|version|v|count|total|sum|phone|tel|fax|imei|isbn|ref|reference)|[#@$=/.+-])[\s:=#]*$/i;

/**
 * Whether unseparated digits have a card brand's prefix and length: Visa (4, 16 digits), Mastercard
 * (51-55 and the 2-series 2221-2720, 16), American Express (34 and 37, 15), Discover (6011,
 * 644-649 and 65, 16), JCB (3528-3589, 16).
 */
function cardBrand(d: string): boolean {
  const n = d.length;
  const two = Number(d.slice(0, 2));
  const four = Number(d.slice(0, 4));
  if (n === 15) return two === 34 || two === 37;
  if (n !== 16) return false;
  return (
    d[0] === "4" ||
    (two >= 51 && two <= 55) ||
    (four >= 2221 && four <= 2720) ||
    four === 6011 ||
    (four >= 6440 && four <= 6499) ||
    two === 65 ||
    (four >= 3528 && four <= 3589)
  );
}

/** Card numbers: Luhn-checked, printed in fours (Amex 4-6-5), or unseparated with a card-ish word just before. */
export const card: Shape = {
  // Every match is 13 digits in a row, a space or dash at most between two: the scan saw such a row.
  gate: has(M.CARD),
  need: [M.CARD, 0],
  // 13 to 19 digits, one space or dash at most between two: a digit first, so the engine looks
  // for a digit before it tries anything (the same matches as `(?:\d[ -]?){12,18}\d`).
  re: /(?<![\d.])\d(?:[ -]?\d){12,18}(?![\d.])/g,
  claim: (m, p) => {
    const first = m[0].charCodeAt(0);
    if (first < 50 || first > 54) return undefined; // cards start with 2 (Mastercard's 2-series) to 6
    const digits = m[0].replace(/[ -]/g, "");
    const grouped = /[ -]/.test(m[0]);
    if (digits.length < 13 || digits.length > 19) return undefined;
    if (!grouped && digits.length !== 15 && digits.length !== 16) return undefined;
    // Ids, trace ids and order numbers are 15-16 digits too (one in ten passes Luhn): an
    // unseparated number is a card with a card-ish word just before it, or, in a log line or a
    // bare error, when it has a card brand's prefix and length and no id's word stands right
    // before it (`order 4111…`, `trace id 4532…`).
    // A secret claimed just before is not context: its random letters hold `cc`, `pan`, `visa`.
    if (!grouped) {
      // A float's mantissa (`1490098223546482e-20`), a word's or an identifier's digits: no card.
      const after = charCode(p.text, m.index + m[0].length);
      if (isWord(after) || isWord(charCode(p.text, m.index - 1))) return undefined;
      // Its own line's words only: a name on the line above (`railsMasterKey := …`) says nothing of it.
      const before = p.text.slice(Math.max(p.claimedUpTo(m.index), m.index - 48, p.text.lastIndexOf("\n", m.index) + 1), m.index);
      if (!CARD_CONTEXT.test(before) && (!cardBrand(digits) || ID_BEFORE.test(before))) return undefined;
    }
    // Cards are printed in fours (Amex 4-6-5); other groupings are ids and numbers.
    if (grouped && !/^\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}$/.test(m[0]) && !/^\d{4}([ -])\d{6}\1\d{5}$/.test(m[0])) return undefined;
    return luhn(digits) ? [m.index, m.index + m[0].length, tag("card")] : undefined;
  },
};

export { apply as applyShape, type Shape };
