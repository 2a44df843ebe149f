/**
 * `redactText`: every secret the value rules recognise in a piece of free text, replaced by
 * `[redacted:<category>]`. Pure.
 *
 * One scan (core/redaction/scan.ts) notes the names, runs, words and operators a text holds; then
 * the stages below run in order, each only where its anchor stands, each claiming the spans it
 * would replace. A span that overlaps an earlier claim is refused, so the more specific rules
 * (key blocks, provider formats) win over the generic ones (assignments, prose) that follow,
 * and the text is rebuilt once. The order is the rules' order of precedence.
 */
import { names } from "./named.js";
import { Pass } from "./pass.js";
import { MAX_SCAN, runs } from "./runs.js";
import { M, type Scan, scanText, W } from "./scan.js";
import * as S from "./shapes.js";

export { MAX_SCAN };

/** A stage: its id, what it does, and the marks and words one of which a text must hold for it to run (-1: every text). */
type Stage = readonly [id: string, run: (p: Pass) => void, marks: number, words: number];

const shape = (id: string, s: S.Shape): Stage => [id, (p) => S.applyShape(p, s), s.need[0], s.need[1]];

/** The stages, in their order of precedence. */
const STAGES: readonly Stage[] = [
  shape("private-key", S.privateKey),
  shape("putty-key", S.puttyKey),
  ["provider", runs, -1, 0], // provider formats, base64 that hides a secret, JWTs
  shape("url-password", S.urlPassword),
  shape("user-password", S.userPassword),
  shape("cli-password", S.cliPassword),
  shape("sql-password", S.sqlPassword),
  shape("password-hash", S.passwordHash),
  shape("pgpass", S.pgpass),
  shape("url-user-token", S.urlUserToken),
  shape("password-stdin", S.passwordStdin),
  shape("name-value", S.nameValue),
  shape("xml-element", S.xmlElement),
  // At each secret-sounding name: headers, `Bearer`, connection strings, URL parameters, CLI
  // flags, YAML blocks, setters, raw strings, call pairs, env lines, assignments, prose.
  ["names", names, -1, 0],
  shape("dotenv", S.dotenv),
  shape("high-entropy", S.highEntropy),
  shape("card", S.card),
  ["cloud-secret-key", S.bareCloudKey, -1, 0],
  ["url-path-token", S.urlPathToken, M.URL, 0],
];

/** The value rules' ids, in their order of precedence (most are also the `<category>` in `[redacted:<category>]`). */
export const VALUE_RULES: readonly string[] = Object.freeze(STAGES.map(([id]) => id));

/** The stages' functions alone, in order: the loop every text goes through reads them by index. */
const RUN: readonly ((p: Pass) => void)[] = STAGES.map(([, run]) => run);
const NEED_MARKS = Int32Array.from(STAGES.map(([, , marks]) => marks));
const NEED_WORDS = Int32Array.from(STAGES.map(([, , , words]) => words));

/**
 * Each stage in turn, unless the text holds none of the marks and words it needs: most texts
 * hold few, and sixteen calls a text, most only for a shape's gate to say no, were about 4% of
 * the time in a profile.
 */
function runStages(p: Pass): void {
  const marks = p.scan.marks;
  const words = p.scan.words;
  for (let i = 0; i < RUN.length; i++) {
    const m = NEED_MARKS[i] as number;
    if (m === -1 || (marks & m) !== 0 || (words & (NEED_WORDS[i] as number)) !== 0) (RUN[i] as (p: Pass) => void)(p);
  }
}

/**
 * Replace every secret the value rules recognise in a piece of free text (an error message, an
 * observation, a command line). Text that contains nothing recognisable comes back unchanged
 * (the same string).
 */
export function redactText(input: string): string {
  if (input.length < 8) return input;
  const scan = scanText(input);
  // Encoded runs first: a provider pattern would otherwise take an encoded token's head and leave
  // its tail. Asked of the scan's marks (two searches of every text for `%` and `\/` cost more);
  // the text is scanned again only when decoding changed it.
  if ((scan.marks & (M.PERCENT | M.ESCAPED_SLASH)) !== 0 && ENCODED.test(input)) {
    const decoded = decodedPass(input);
    if (decoded !== input) return redactPlain(decoded, scanText(decoded));
  }
  return redactPlain(input, scan);
}

/**
 * What can start a match with neither a secret-sounding name nor a long run in the text:
 * `://…@`, `-u user:pw`, `-pSECRET`, `$2y$…`, card numbers (13 digits in a row), a PuTTY key's
 * `Private-Lines`, `IDENTIFIED BY '…'`, `echo … | sudo -S`; and `.pgpass` lines (four colons).
 */
const QUIET_MARKS = M.URL | M.DASH_U | M.DASH_P | M.DOLLAR | M.CARD;
const QUIET_WORDS = W.PRIVATE | W.IDENTIFIED | W.STDIN;

/** `redactText` without the decoding of URL-encoded and JSON-escaped runs, given the text's scan. */
function redactPlain(text: string, scan: Scan): string {
  if (
    scan.names.length === 0 &&
    scan.runs.length === 0 &&
    (scan.marks & QUIET_MARKS) === 0 &&
    (scan.words & QUIET_WORDS) === 0 &&
    scan.colons < 4
  )
    return text;
  const p = new Pass(text, scan, redactText);
  runStages(p);
  return p.result();
}

/** A percent escape or a JSON-escaped slash somewhere in a text. */
const ENCODED = /%[0-9A-Fa-f]{2}|\\\//;

/** A run that may hold a percent escape or a JSON-escaped slash (tested per run: one pattern for both would backtrack). */
const ENCODED_RUN = /[^\s"'<>`]{16,}/g;

/**
 * Secrets the rules cannot see where they stand: URL-encoded (`token%3Dghp_…`, `%22ghp_…`,
 * `id_token%3DeyJ…`) or with JSON-escaped slashes (`https:\/\/hooks.slack.com\/…`). Each such
 * run is decoded and scanned again; a run that then holds a secret is stored decoded and
 * redacted (the same text, spelled plainly), every other run is left as it was. A run that,
 * as written, ends in a secret the rules take whole (a Django key, whose alphabet has `%` and
 * `+`: `SECRET_KEY=…q%63dn7b&)…`) is left to the main pass: decoding would turn `%63` into `c`
 * and `+` into a space, and cut the key there.
 */
function secretToEnd(run: string): boolean {
  const p = new Pass(run, scanText(run), redactText);
  runStages(p);
  return p.claimedUpTo(run.length) === run.length;
}
function decodedPass(text: string): string {
  return text.replace(ENCODED_RUN, (run) => {
    if (!/%[0-9A-Fa-f]{2}|\\\//.test(run)) return run;
    let plain = run.replaceAll("\\/", "/");
    if (/%[0-9A-Fa-f]{2}/.test(plain)) {
      try {
        plain = decodeURIComponent(plain.replace(/\+/g, " "));
      } catch {
        plain = plain.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
      }
    }
    if (plain === run) return run;
    const r = redactText(plain);
    // Whether the run as written ends in a secret is asked last: only a run whose decoded text
    // holds a secret needs the answer (most encoded runs are ordinary query strings and JSON).
    return r === plain || secretToEnd(run) ? run : r;
  });
}
