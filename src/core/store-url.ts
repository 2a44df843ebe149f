/** Showing a store URL without its secrets (pure: the config reader and the backend share it). */

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
