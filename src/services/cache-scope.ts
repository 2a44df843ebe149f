/**
 * The caches a workspace keeps in the store, the whole-tree stat cache and the lessons search
 * index, are one per scope. On a store shared across hosts the scope is the host and the
 * workspace root: each host has its own files, inodes, clocks and LESSONS.md. A store that is
 * not shared (SQLite, inside the workspace) is this machine's, so the root alone is the scope,
 * and a renamed host (containers, CI, laptops) keeps its caches.
 *
 * `baton gc` drops scopes not used for CACHE_TTL_MS (a renamed host, a moved workspace, an
 * ephemeral CI runner). A cache used without changing is noted as used at most once per
 * CACHE_TOUCH_MS, so an active workspace whose files or lessons stay the same keeps its caches
 * at the cost of one small write a day.
 */
export const CACHE_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const CACHE_TOUCH_MS = 24 * 60 * 60 * 1000;

export function cacheScope(sharedAcrossHosts: boolean, host: string, root: string): string {
  return sharedAcrossHosts ? `${host}:${root}` : root;
}
