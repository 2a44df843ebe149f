/**
 * The user's home folder, as an agent's own Node finds it (`os.homedir()`: `$HOME` on POSIX), but
 * always absolute. An empty or relative HOME (cron, a container, `env -i HOME=`) made
 * `os.homedir()` answer "" or "rel", so `~/.claude/settings.json` became `.claude/settings.json`
 * in whatever folder the command ran in: a `--user` install landed in the project, where git can
 * commit it. Then the account's own folder from the password database is the home; without one
 * the command cannot tell where the user's files are (`bad_input`).
 *
 * node:os is loaded only when HOME is not an absolute path (the hook path reads HOME alone).
 */
import { createRequire } from "node:module";
import { isAbsolute, resolve } from "node:path";
import { BatonError } from "../errors.js";

let os: typeof import("node:os") | undefined;

export function userHome(env: NodeJS.ProcessEnv = process.env): string {
  // Windows answers USERPROFILE, whatever HOME a Unix-like shell sets there.
  const home = process.platform === "win32" ? undefined : env.HOME?.trim();
  if (home && isAbsolute(home)) return resolve(home);
  os ??= createRequire(import.meta.url)("node:os") as typeof import("node:os");
  let account: string | undefined;
  try {
    const dir = os.homedir(); // throws without HOME when this uid has no entry (a container's arbitrary user)
    if (isAbsolute(dir)) return dir;
    account = os.userInfo().homedir;
  } catch {
    account = undefined;
  }
  if (account && isAbsolute(account)) return account;
  throw new BatonError(
    "bad_input",
    `your home folder is unknown: HOME ${env.HOME === undefined ? "is not set" : `is ${JSON.stringify(env.HOME)}, not an absolute path,`} and this account has none; set HOME to your home folder and run the command again`,
    { home: env.HOME ?? "" },
  );
}
