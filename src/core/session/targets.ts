/**
 * External targets: what a session is bound to (a browser tab, a remote job), and whether a
 * target someone observes now is that one. Pure.
 *
 * A session's target is the truth: a caller that finds another target active (a different tab,
 * a different job) gets a mismatch, never a silent switch. URLs are kept cut to protocol, host
 * and path, so query strings, fragments and credentials (tokens, signed parameters) are never
 * stored or shown.
 */
import type { TargetBinding } from "../types.js";

export interface TargetInput {
  kind: string;
  id: string;
  url?: string;
  label?: string;
}

/** A URL cut to protocol, host and path (`https://host/path`); text that is not a URL is dropped to its first 200 characters without query. */
export function cutUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "ws:" || u.protocol === "wss:") {
      return `${u.protocol}//${u.host}${u.pathname}`;
    }
    return `${u.protocol}${u.host ? `//${u.host}` : ""}${u.pathname}`;
  } catch {
    return url.split(/[?#]/, 1)[0]?.slice(0, 200) ?? "";
  }
}

/** Every URL inside a text, cut (see `cutUrl`). */
export function cutUrlsIn(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (m) => cutUrl(m));
}

export interface TargetComparison {
  match: boolean;
  /** What differs: `kind`, `id`, `url host`, `url path`. */
  differences: string[];
  /** Compatible but worth saying (e.g. the URL moved deeper under the bound path). */
  warnings: string[];
}

/**
 * Whether `observed` is the bound target. Kind and id must be equal. URLs, when both are
 * known, must share protocol and host, and the observed path must be the bound path or lie
 * under it (a provider's root page turning into a conversation page is the same target).
 */
export function compareTarget(bound: TargetBinding, observed: Partial<TargetInput>): TargetComparison {
  const differences: string[] = [];
  const warnings: string[] = [];
  if (observed.kind !== undefined && observed.kind !== bound.kind) differences.push("kind");
  if (observed.id !== undefined && observed.id !== bound.id) differences.push("id");
  if (observed.url !== undefined && bound.url !== undefined) {
    const a = parse(bound.url);
    const b = parse(cutUrl(observed.url));
    if (!a || !b || a.origin !== b.origin) differences.push("url host");
    else if (!underPath(b.path, a.path)) differences.push("url path");
    else if (b.path !== a.path) warnings.push(`the target's URL moved from ${a.origin}${a.path} to ${b.origin}${b.path}`);
  }
  return { match: differences.length === 0, differences, warnings };
}

function parse(url: string): { origin: string; path: string } | undefined {
  try {
    const u = new URL(url);
    return { origin: `${u.protocol}//${u.host}`, path: u.pathname || "/" };
  } catch {
    return undefined;
  }
}

function underPath(path: string, base: string): boolean {
  if (path === base || base === "/") return true;
  const b = base.endsWith("/") ? base : `${base}/`;
  return path.startsWith(b);
}

/** The codes of the stored notes `baton target resolve` leaves: a mismatch, and the match that settles it. */
export const TARGET_NOTES: readonly string[] = ["target_mismatch", "target_matched"];

/**
 * The target observation noted last (by time: the order stored notes come back in is the
 * backend's). It decides whether the target observed last was the bound one.
 */
export function lastTargetNote<T extends { code: string; at?: string }>(notes: readonly T[]): T | undefined {
  return notes
    .filter((d) => TARGET_NOTES.includes(d.code))
    .reduce<T | undefined>((last, d) => (!last || (d.at ?? "") >= (last.at ?? "") ? d : last), undefined);
}
