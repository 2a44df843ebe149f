/**
 * Adversarial inputs for redaction: runs of a rule's trigger with nothing (or one thing, far
 * away) to match. Shared by test/redaction-adversarial.test.ts (outputs) and bench/redact.mjs
 * (timings). `secret`: what must not survive; `same`: the text must come back unchanged.
 * Every output must also be stable (a second pass changes nothing).
 */
export interface Adversarial {
  name: string;
  text: string;
  secret?: string;
  same?: boolean;
}

export const ADVERSARIAL: readonly Adversarial[] = [
  { name: "64 KB of `login ` then -p", text: `${"login ".repeat(11_000)}-p`, same: true },
  { name: "200 KB of `mysql -u x ` then -p", text: `${"mysql -u x ".repeat(18_000)}-p`, same: true },
  { name: "200 KB of `=`", text: "=".repeat(200_000), same: true },
  { name: "200 KB of `:`", text: ":".repeat(200_000), same: true },
  { name: "200 KB of quotes", text: "'\"".repeat(100_000), same: true },
  { name: "200 KB of `password=`", text: "password=".repeat(22_000) },
  { name: "BEGIN without END, repeated", text: "-----BEGIN RSA PRIVATE KEY-----\n".repeat(6_000), secret: "BEGIN RSA" },
  { name: "200 KB of base64", text: "QUJD".repeat(50_000), same: true },
  { name: "200 KB of `%41`", text: "%41".repeat(66_000) },
  { name: "escaped quotes after `token:`", text: 'token: \\"'.repeat(20_000) },
  { name: "200 KB of `key: value `", text: "key: value ".repeat(18_000), same: true },
  { name: "`  password: |` lines", text: "  password: |\n".repeat(15_000), same: true },
  { name: "`a:1:b:c:` run", text: "a:1:b:c:".repeat(25_000), same: true },
  { name: "`echo x | ` then --password-stdin", text: `${"echo x | ".repeat(20_000)}--password-stdin`, secret: "echo x | --password-stdin" },
  { name: "`https://u:p@` run", text: "https://u:p@".repeat(16_000), secret: "u:p@" },
  { name: "`DB_PASSWORD=a b ` run", text: "DB_PASSWORD=a b ".repeat(12_000), secret: "a b DB" },
  { name: "`setPassword(` run", text: "setPassword(".repeat(16_000), same: true },
  { name: "`secret = r#` run", text: "secret = r#".repeat(16_000) },
  { name: "200 KB of `ab%2F`", text: "ab%2F".repeat(40_000), same: true },
  { name: "200 KB of `ab\\/`", text: "ab\\/".repeat(40_000), same: true },
  // Long runs, and one `=` at the end: the high-entropy shape looks for a `=` in each run.
  { name: "200 KB of long runs, then `KEY=`", text: `${"abcdefghijklmnopqrstuvwxyz0123 ".repeat(6_500)}KEY=x`, same: true },
  // One run of a rule's literal, and a real token of the rule at its end: the rule's pattern is
  // tried at every `YC`, and each time the literals the run lacks (`AQVN`, `t1.9euelZ`) were
  // searched for to the run's end (quadratic: 260 ms here).
  {
    name: "200 KB of `YCYC…!` run, then a Yandex key",
    text: `${`${"YC".repeat(18)}!`.repeat(5_400)}!YCaB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC`,
    secret: "YCaB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC",
  },
  // A long line's start, then many values shaped like a member access: whether each name is what
  // its line declares (`const token = …`) was read from the line's start every time (quadratic:
  // 2.3 s at 414 KB), and is now read only within a line's first 128 characters.
  { name: "100 KB of spaces, then `token = a1.bcd ` run", text: `${" ".repeat(100_000)}${"token = a1.bcd ".repeat(7_000)}` },
];
