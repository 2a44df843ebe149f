/**
 * Naming a store: showing its URL without secrets, and the rule for project names (pure: the
 * config reader and the PostgreSQL backend share both).
 */
import { BatonError } from "../errors.js";

/**
 * A project name: lowercase so that two spellings never mean one project, and short enough that
 * `baton_<name>_<hash8>` fits PostgreSQL's 63-byte identifiers.
 */
const PROJECT = /^[a-z0-9][a-z0-9_-]{0,47}$/;

export function checkProject(project: string): string {
  if (!PROJECT.test(project)) {
    throw new BatonError(
      "bad_input",
      `project ${JSON.stringify(project)} is invalid: use 1-48 lowercase letters, digits, '_' or '-', starting with a letter or digit`,
    );
  }
  return project;
}

/**
 * Query parameters the driver (pg-connection-string) reads as secrets: never written down,
 * never shown. `passfile` and `sslkey` name files, which are not secrets themselves.
 */
export const SECRET_PARAMS = new Set(["password", "sslpassword"]);

/**
 * The URL as it may be shown: no password, secret query parameters replaced. Never the raw
 * input: an unparsable URL (a bad port, say) may still hold a password.
 */
export function redactStoreUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "(an unparsable URL)";
  }
  u.password = "";
  for (const name of [...u.searchParams.keys()]) {
    if (SECRET_PARAMS.has(name.toLowerCase())) u.searchParams.set(name, "redacted");
  }
  return u.toString();
}
