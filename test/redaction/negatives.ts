/**
 * Ordinary developer text that must come back from redaction unchanged: git SHAs, UUIDs in
 * ordinary fields, paths, versions, base64 of ordinary text, colours, numbers, code that talks
 * about secrets without holding one, logs and stack traces. Random fills from the same seed.
 */
import { KEEP_FIXTURES } from "./fixtures.js";
import { b64, CLASSES, chars, int, pick, type Rng } from "./rng.js";

const hex = (r: Rng, n: number) => chars(r, CLASSES.x as string, n);
const uuid = (r: Rng) => `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`;
const ver = (r: Rng) => `${int(r, 0, 20)}.${int(r, 0, 40)}.${int(r, 0, 99)}`;
const WORDS =
  "build test deploy cache index server client config parse render route query batch merge queue lesson ledger checkpoint rollback spiral hook journal".split(
    " ",
  );
const word = (r: Rng) => pick(r, WORDS);
const path = (r: Rng) =>
  `/${pick(r, ["home/dev", "srv", "usr/local", "workspace", "tmp"])}/${word(r)}/${pick(r, ["src", "lib", "test"])}/${word(r)}-${word(r)}.${pick(r, ["ts", "py", "go", "rs", "json", "md"])}`;
const SENTENCES = [
  "Reset your password from the account settings page.",
  "The token expired; sign in again to get a new one.",
  "Rotate the API key every 90 days and store it in the vault.",
  "Tokens are counted per request, including the system prompt.",
  "The secret manager is configured per environment.",
  "Authentication failed: check that the credentials file exists.",
  "Use a password manager instead of reusing passwords.",
  "This PR moves the session handling into its own module.",
];

type Gen = (r: Rng) => string;

const GENERATORS: Gen[] = [
  (r) => `commit ${hex(r, 40)}\nAuthor: Dev <dev@example.com>\n\n    Fix ${word(r)} ${word(r)}`,
  (r) => `${hex(r, 7)} ${pick(r, SENTENCES)}`,
  (r) => `git checkout ${hex(r, 40)}`,
  (r) => `Merge: ${hex(r, 7)} ${hex(r, 7)}`,
  (r) => `{"id": "${uuid(r)}", "status": "ok", "count": ${int(r, 0, 9999)}}`,
  (r) => `request_id=${uuid(r)} duration_ms=${int(r, 1, 900)}`,
  (r) => `sessionId: "${word(r)}-${int(r, 1, 99)}"`,
  (r) => `trace_id: ${hex(r, 32)} span_id: ${hex(r, 16)}`,
  (r) => `Reading ${path(r)}`,
  (r) => `  at ${word(r)}${pick(r, ["Handler", "Service", "Worker"])}.run (${path(r)}:${int(r, 1, 400)}:${int(r, 1, 80)})`,
  (r) => `Traceback (most recent call last):\n  File "${path(r)}", line ${int(r, 1, 300)}, in ${word(r)}\nKeyError: '${word(r)}'`,
  (r) => `"version": "${ver(r)}", "node": ">=${int(r, 16, 22)}"`,
  (r) => `${pick(r, ["react", "vitest", "typescript", "@types/node", "esbuild"])}@${ver(r)}`,
  (r) => `FROM python:3.${int(r, 8, 13)}-slim@sha256:${hex(r, 64)}`,
  (r) => `"integrity": "sha512-${b64(chars(r, CLASSES.n as string, 64)).slice(0, 86)}=="`,
  (r) => `color: #${hex(r, 6)}; background: rgba(${int(r, 0, 255)}, ${int(r, 0, 255)}, ${int(r, 0, 255)}, 0.5);`,
  (r) => `${int(r, 0, 1e6)} ${int(r, 0, 1e9)} ${(r() * 1000).toFixed(3)}`,
  (r) => pick(r, SENTENCES),
  (r) => `content: ${b64(`${pick(r, SENTENCES)} ${pick(r, SENTENCES)}`)}`,
  (r) => `echo ${b64(`${word(r)} ${word(r)} ${word(r)} done`)} | base64 -d`,
  (_r) => `const token = await getToken(); // refresh when expired`,
  (_r) => `password: string;`,
  (_r) => `if (secret === undefined) throw new Error("missing secret");`,
  (_r) => `max_tokens: 4096, tokenType: "Bearer", token_count: 12`,
  (_r) => `Authorization: Bearer \${API_TOKEN}`,
  (_r) => `password: process.env.DB_PASSWORD`,
  (_r) => `export GITHUB_TOKEN=$(gh auth token)`,
  (_r) => `echo "$CR_PAT" | docker login ghcr.io -u USERNAME --password-stdin`,
  (_r) => `api_key = os.environ["OPENAI_API_KEY"]`,
  (_r) => `const secretName = "prod/db/credentials";`,
  (_r) => `password_field = page.locator("#password")`,
  (_r) => `curl -H "Authorization: Bearer $TOKEN" https://api.example.com/me`,
  (r) => `https://github.com/acme/${word(r)}/pull/${int(r, 1, 9999)}?tab=files&diff=split`,
  (r) => `GET /api/v1/${word(r)}?page=${int(r, 1, 50)}&sort=asc&limit=${int(r, 10, 100)} 200 ${int(r, 1, 90)}ms`,
  (r) => `https://registry.npmjs.org/${word(r)}/-/${word(r)}-${ver(r)}.tgz`,
  (r) => `2025-03-02T10:${int(r, 10, 59)}:${int(r, 10, 59)}Z INFO ${word(r)} finished in ${int(r, 1, 900)}ms (${int(r, 0, 99)} items)`,
  (r) => `[${word(r)}] ${int(r, 1, 50)} passed, ${int(r, 0, 3)} skipped`,
  (r) => `PORT=${int(r, 1000, 9999)}\nNODE_ENV=production\nLOG_LEVEL=info`,
  (r) => `image: ghcr.io/acme/${word(r)}:${ver(r)}`,
  (r) =>
    `function ${word(r)}${pick(r, ["Token", "Key", "Secret"])}(input: string): boolean {\n  return input.length > ${int(r, 1, 64)};\n}`,
  (r) => `key: ${word(r)}-${word(r)}`,
  (r) => `cache key: ${word(r)}:${hex(r, 12)}`,
  (r) => `etag: "W/${hex(r, 16)}"`,
  (r) => `user@example.com sent ${int(r, 1, 99)} messages to #${word(r)}`,
  (r) => `SELECT id, name FROM ${word(r)}s WHERE created_at > now() - interval '${int(r, 1, 30)} days';`,
  (r) => `docker build -t ${word(r)}:${ver(r)} .`,
  (r) => `Checksum: ${hex(r, 64)}  ${word(r)}.tar.gz`,
  (r) => `md5 ${hex(r, 32)}`,
  (r) => `"password_min_length": ${int(r, 8, 16)}, "password_required": true`,
  (r) => `Step ${int(r, 1, 9)}/${int(r, 10, 20)} : RUN npm run ${word(r)}`,
  (r) => `ssh-keygen -t ed25519 -C "dev@example.com" -f ~/.ssh/id_${word(r)}`,
  (r) => `-----BEGIN CERTIFICATE-----\nMIIB${chars(r, CLASSES.b as string, 60)}\n-----END CERTIFICATE-----`,
  (r) => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${chars(r, CLASSES.b as string, 43)} dev@laptop`,
  // Stack traces whose function names sound secret: the location must survive.
  (r) =>
    `Error: ${pick(r, ["jwt expired", "invalid signature", "ECONNREFUSED"])}\n    at ${pick(r, ["verifyToken", "getApiKey", "refreshSecret", "rotateKey", "decodeJwt", "loadCredentials"])} (${path(r)}:${int(r, 1, 400)}:${int(r, 1, 80)})\n    at async ${word(r)}${pick(r, ["Token", "Key", "Secret"])} (${path(r)}:${int(r, 1, 400)}:${int(r, 1, 80)})`,
  (r) =>
    `  File "${path(r)}", line ${int(r, 1, 300)}, in get_${pick(r, ["token", "api_key", "secret", "password"])}\n    return self._${word(r)}(key)\nValueError: bad ${word(r)}`,
  // Lockfiles
  (r) =>
    `"node_modules/${word(r)}": {\n  "version": "${ver(r)}",\n  "resolved": "https://registry.npmjs.org/${word(r)}/-/${word(r)}-${ver(r)}.tgz",\n  "integrity": "sha512-${b64(chars(r, CLASSES.n as string, 64)).slice(0, 86)}=="\n}`,
  (r) => `[[package]]\nname = "${word(r)}"\nversion = "${ver(r)}"\nchecksum = "${hex(r, 64)}"`,
  (r) =>
    `${word(r)}@^${ver(r)}:\n  version "${ver(r)}"\n  resolved "https://registry.yarnpkg.com/${word(r)}/-/${word(r)}-${ver(r)}.tgz#${hex(r, 40)}"`,
  // CI logs
  (r) =>
    `##[group]Run actions/cache@v4\nwith:\n  key: ${pick(r, ["Linux", "macOS"])}-node-${hex(r, 64)}\n  path: ~/.npm\n##[endgroup]\nCache restored from key: Linux-node-${hex(r, 64)}`,
  (r) =>
    `Run npm ci\nadded ${int(r, 100, 1500)} packages, and audited ${int(r, 100, 1500)} packages in ${int(r, 2, 60)}s\nfound 0 vulnerabilities`,
  (r) => `cacheKey = "v1-deps-${hex(r, 40)}"`,
  (r) => `{ key: "${word(r)}-list-item-${hex(r, 6)}", label: "${word(r)}" }`,
  // Diffs
  (r) =>
    `diff --git a/src/${word(r)}.ts b/src/${word(r)}.ts\nindex ${hex(r, 7)}..${hex(r, 7)} 100644\n--- a/src/${word(r)}.ts\n+++ b/src/${word(r)}.ts\n@@ -${int(r, 1, 90)},7 +${int(r, 1, 90)},8 @@ export function ${word(r)}Token() {\n-  const ttl = ${int(r, 10, 99)};\n+  const ttl = ${int(r, 100, 999)};`,
  // Minified JS
  (r) =>
    `!function(e,t){"use strict";var n=e.${word(r)}||{},r=function(e){return e&&e.__esModule?e:{default:e}};n.getToken=function(){return t.get("${word(r)}")},e.exports=n}(this,${int(r, 0, 9)});`,
  // SQL
  (r) => `CREATE TABLE api_keys (id uuid PRIMARY KEY, key_hash text NOT NULL, created_at timestamptz DEFAULT now()); -- ${int(r, 1, 99)}`,
  (r) => `UPDATE users SET password_reset_sent_at = now() WHERE id = ${int(r, 1, 1e6)};`,
  // HTML
  (r) =>
    `<form method="post"><input type="password" name="password" autocomplete="current-password"><input type="hidden" name="id" value="${int(r, 1, 9999)}"><button>Sign in</button></form>`,
  (r) => `<meta name="csrf-param" content="authenticity_token"><link rel="stylesheet" href="/assets/app-${hex(r, 16)}.css">`,
  // Ids that are 15-16 digits, and model-ish package names
  (r) => `order ${pick(r, ["4111111111111111", "5500005555555559", "4532015112830366"])} shipped in ${int(r, 1, 9)} days`,
  (_r) => `pip install sk-learn-compat-layer-v2-2024`,
  // The hand-written cases of fixtures.ts, so the precision figure includes them.
  (r) => pick(r, KEEP_FIXTURES),
];

/** `n` items of ordinary text. */
export function negatives(r: Rng, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((GENERATORS[i % GENERATORS.length] as Gen)(r));
  return out;
}
