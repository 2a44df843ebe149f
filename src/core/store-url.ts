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
 * The query parameters a store URL may carry: where and how to connect (TLS, the client's
 * name and encoding, a socket's database). Anything else the driver would pass on as a setting,
 * and some change what Baton reads and writes: `options=-c search_path=…` would put this
 * workspace in another project's schema while every message named the first, `-c role=…` act as
 * another role. So every other parameter is refused.
 */
export const STORE_URL_PARAMS = new Set([
  "host",
  "port",
  "user",
  "password",
  "sslpassword",
  "ssl",
  "sslmode",
  "sslrootcert",
  "sslcert",
  "sslkey",
  "sslnegotiation",
  "uselibpqcompat",
  "application_name",
  "fallback_application_name",
  "client_encoding",
  "encoding",
  "db",
  "connect_timeout",
]);

/** `bad_input` for a fragment, or the first query parameter of a store URL that Baton does not take. */
export function checkStoreParams(u: URL): void {
  // Never echoed: a fragment is where a password pasted by mistake ends up (`#password=…`).
  if (u.hash !== "") throw new BatonError("bad_input", "the store URL has a fragment (`#…`), which a store URL never needs; remove it");
  for (const name of u.searchParams.keys()) {
    if (!STORE_URL_PARAMS.has(name)) {
      throw new BatonError(
        "bad_input",
        `the store URL's parameter ${JSON.stringify(name)} is not taken: Baton chooses the schema (the project) and the session settings itself, and a URL parameter could change them; remove it (allowed: ${[...STORE_URL_PARAMS].join(", ")})`,
      );
    }
  }
}

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
  u.hash = "";
  for (const name of [...u.searchParams.keys()]) {
    if (SECRET_PARAMS.has(name.toLowerCase())) u.searchParams.set(name, "redacted");
  }
  return u.toString();
}
