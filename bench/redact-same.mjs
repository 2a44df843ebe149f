/**
 * Whether two builds of Baton's redaction give the same output, string for string: the check
 * every speed change to core/redaction/ must pass (docs/benchmarks.md, "Redaction"). Compared
 * on every text of the corpus seeds given (test/redaction/: placements and ordinary texts), on
 * each text cut at every space and line break (a corpus text always has an ordinary line after
 * its secret, so a value at the very end of a text is only seen this way), on the
 * adversarial inputs, on texts glued together at random from pieces of the corpus, and on
 * assignments built at random from names, operators, quotes and values.
 *
 *   node scripts/build.mjs   # in each checkout
 *   node bench/redact-same.mjs <checkout A> <checkout B> [seeds=11-15] [glued=100000]
 *
 * Prints the first differences with the text, and exits 1 when there is any.
 */
import { pathToFileURL } from "node:url";
import { builtLibrary, commandLine } from "./lib.mjs";
import { loadCorpus } from "./redact.mjs";

const [a, b, seedArg = "11-15", gluedArg = "100000"] = commandLine(import.meta.url, { positional: [0, 4] });
const usage = "usage: node bench/redact-same.mjs <checkout A> <checkout B> [seeds=11-15] [glued=100000]";
const range = /^(\d+)(?:-(\d+))?$/.exec(seedArg);
const glued = Number(gluedArg);
if (!a || !b || !range || !Number.isInteger(glued) || glued < 0) {
  console.error(usage);
  process.exit(2);
}
const load = async (dir) => (await import(pathToFileURL(builtLibrary(dir)).href)).redactText;
const [A, B] = [await load(a), await load(b)];
const { generate, corpusTexts, ADVERSARIAL } = await loadCorpus();

let compared = 0;
let differ = 0;
function same(text) {
  compared++;
  const x = A(text);
  const y = B(text);
  if (x === y) return;
  if (differ++ < 10)
    console.log(
      `differs on ${JSON.stringify(text).slice(0, 400)}\n  A: ${JSON.stringify(x).slice(0, 400)}\n  B: ${JSON.stringify(y).slice(0, 400)}`,
    );
}

const pieces = [];
const first = Number(range[1]);
const last = Number(range[2] ?? range[1]);
for (let seed = first; seed <= last; seed++) {
  for (const text of corpusTexts(generate(seed))) {
    same(text);
    // Cut at every space and line break: a value then ends the text, or a name starts it.
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 10) continue;
      same(text.slice(0, i));
      if (c === 10) same(text.slice(i + 1));
    }
    if (pieces.length < 200_000) pieces.push(...text.split(/(?<=[\s"'=:,;])/));
  }
  console.log(`seed ${seed}: ${compared} texts compared so far, ${differ} differ`);
}
for (const x of ADVERSARIAL) same(x.text);

// Glued: 2 to 8 pieces of corpus texts in a seeded random order, so names, values and ends of
// text meet in ways no placement put them.
let state = 0x9e3779b9;
const rand = (n) => {
  state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6b43a9b5) >>> 0;
  return state % n;
};
for (let k = 0; k < glued; k++) {
  let text = "";
  for (let j = 2 + rand(7); j > 0; j--) text += pieces[rand(pieces.length)];
  same(text);
}

// Assignments built piece by piece: a name, what may close it, spaces, an operator (or a verb),
// what may open a value, and a value (provider tokens among them), one to four in a text. The
// corpus writes each shape in its usual spelling; the rules at a name must also agree on the
// unusual ones (`--secret .=\"ghp_…\"` once differed here and nowhere in the corpus).
const NAMES = ["password", "Password", "Pwd", "DB_PASSWORD", "token", "Authorization", "Cookie", "Set-Cookie", "x-api-key", "api_key"];
NAMES.push("secret", "Bearer", "Token", "access_token", "apiKey", "key", "sig", "client_secret", "auth_token");
const LEADS = ["", " ", "\n", "?", "&", ";", "#", "--", "-", "$", "@", ":", '"', "'", '\\"', "export ", "ENV ", "set ", "- ", "x.", "a["];
const CLOSES = ["", "", '"', "'", '\\"', "]", "[0]"];
const SPACES = ["", "", " ", "  ", "\t"];
const OPERATORS = ["", ":", "=", ":=", "::=", "=>", "?=", ".=", "+=", "==", "::", " is ", " set to ", " to "];
const OPENS = ["", "", '"', "'", '\\"', "\\'", "`", "(", 'r#"', ";", ">"];
const VALUES = ["ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "AKIAIOSFODNN7EXAMPLE", "glpat-aB3dE6gH9jK2mN5pQ8sT", "s3cr3tV4lue-99xQz"];
VALUES.push("hunter2-xyz9", "x", "", ";", ">", "abc123;");
const ENDS = ["", "", ";", '"', "'", '\\"', " ", "\n", ",", ")", ".", "&x=1", " + y", "\r\n"];
const any = (xs) => xs[rand(xs.length)];
for (let k = 0; k < glued; k++) {
  let text = "";
  for (let j = 1 + rand(4); j > 0; j--)
    text += any(LEADS) + any(NAMES) + any(CLOSES) + any(SPACES) + any(OPERATORS) + any(SPACES) + any(OPENS) + any(VALUES) + any(ENDS);
  same(text);
}
console.log(
  `${compared} texts compared (seeds ${first}-${last}, cut at every space and line break, adversarial, ${glued} glued, ${glued} assignments): ${differ} differ`,
);
process.exit(differ === 0 ? 0 : 1);
