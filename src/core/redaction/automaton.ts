/**
 * A multi-literal matcher for redaction's scan (core/redaction/scan.ts): an Aho-Corasick automaton
 * over lowercase letters, digits and the punctuation the literals use, fed one character at a
 * time. Pure.
 *
 * Its table of transitions is filled lazily: the trie's own edges at build time, every other
 * transition the first time it is taken (by following failure links). Filled eagerly, the
 * table (about 1,200 states × 45 classes) cost a fresh process several times the ~1 ms its first
 * redaction may take (each hook is a fresh process); lazily, build is the trie alone.
 */

/** Characters outside the alphabet (class 0) end every literal: the automaton returns to its root. */
export const CLASS = new Uint8Array(128);
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789$-./:=_~";
for (let i = 0; i < ALPHABET.length; i++) {
  const c = ALPHABET.charCodeAt(i);
  CLASS[c] = i + 1;
  if (c >= 97 && c <= 122) CLASS[c - 32] = i + 1; // A-Z as a-z
}
/** The number of classes. */
export const K = ALPHABET.length + 1;
/**
 * Set in a transition whose target state reports a literal (its `bits` are not 0): the scan
 * reads a state's bits only then, one load fewer for most characters. UNKNOWN has it too.
 */
export const OUT = 1 << 24;
/** A transition's target row (`state * K`), without OUT. */
export const ROW = OUT - 1;
/** A transition not filled in yet (OUT set, and a row no state has). */
export const UNKNOWN = OUT | ROW;

export interface Literal {
  /** Lowercase, from the alphabet above. */
  text: string;
  /** Bits reported where it ends (`Automaton.rowBits`). */
  bits: number;
  /** A number reported where it ends (`Automaton.ids`), or -1. */
  id: number;
}

export interface Automaton {
  /**
   * `delta[row + class]`, where a state's row is `state * K`: the next state's row, with OUT set
   * when it reports a literal, or UNKNOWN until `resolve` has filled it. Rows rather than states:
   * the scan steps the automaton once a character, each step waiting on the one before, and a
   * row saves that chain a multiplication. Class 0 (outside the alphabet) leads every state to
   * the root (row 0).
   */
  delta: Int32Array;
  /**
   * Per state, at its row (`rowBits[state * K]`, the other entries unused): the bits of every
   * literal that ends there (its own and its suffixes'), read where a transition reports,
   * without a division.
   */
  rowBits: Uint16Array;
  /** Per state: the ids of every literal that ends there, ascending; undefined when none. */
  ids: (readonly number[] | undefined)[];
  /** The transition from the state at `row` on `cls` (a `delta` entry: OUT may be set), filled in on first use. */
  resolve: (row: number, cls: number) => number;
}

/** A trie's transition not filled in yet (`automaton`'s table of states, before rows). */
const NONE = 0xffff;

export function automaton(literals: readonly Literal[]): Automaton {
  const edges: number[] = []; // trie edges, as state * K + class → child, in a flat map
  const trie = new Map<number, number>();
  const bits: number[] = [0];
  const ids: (number[] | undefined)[] = [undefined];
  for (const l of literals) {
    let s = 0;
    for (let i = 0; i < l.text.length; i++) {
      const k = CLASS[l.text.charCodeAt(i)] as number;
      if (k === 0) throw new Error(`redact-automaton: ${JSON.stringify(l.text)} has a character outside the alphabet`);
      let t = trie.get(s * K + k);
      if (t === undefined) {
        t = bits.length;
        bits.push(0);
        ids.push(undefined);
        trie.set(s * K + k, t);
        edges.push(s * K + k, t);
      }
      s = t;
    }
    bits[s] = (bits[s] as number) | l.bits;
    if (l.id >= 0) ids[s] = [...(ids[s] ?? []), l.id];
  }
  const n = bits.length;
  if (n >= NONE || n * K > ROW) throw new Error(`redact-automaton: ${n} states; at most ${Math.min(NONE - 1, Math.floor(ROW / K))} fit`);
  // The trie in states, with the transitions the failure links need filled in.
  const next = new Uint16Array(n * K).fill(NONE);
  next.fill(0, 0, K); // from the root, every character without an edge stays at the root
  for (let i = 0; i < edges.length; i += 2) next[edges[i] as number] = edges[i + 1] as number;
  const fail = new Uint16Array(n);
  const walk = (state: number, cls: number): number => {
    let t = next[state * K + cls] as number;
    if (t === NONE) {
      t = walk(fail[state] as number, cls);
      next[state * K + cls] = t;
    }
    return t;
  };
  // Failure links and outputs, breadth first (a state's link is shallower than it).
  const children = new Map<number, number[]>();
  for (let i = 0; i < edges.length; i += 2) {
    const parent = Math.floor((edges[i] as number) / K);
    const list = children.get(parent) ?? [];
    list.push(edges[i] as number, edges[i + 1] as number);
    children.set(parent, list);
  }
  const queue = [0];
  for (let q = 0; q < queue.length; q++) {
    const s = queue[q] as number;
    const list = children.get(s);
    if (list === undefined) continue;
    for (let i = 0; i < list.length; i += 2) {
      const t = list[i + 1] as number;
      const f = s === 0 ? 0 : walk(fail[s] as number, (list[i] as number) % K);
      fail[t] = f;
      bits[t] = (bits[t] as number) | (bits[f] as number);
      const inherited = ids[f];
      if (inherited !== undefined) ids[t] = [...new Set([...(ids[t] ?? []), ...inherited])].sort((a, b) => a - b);
      queue.push(t);
    }
  }
  // The table the scan reads, in rows: every transition known so far, saying whether its
  // target reports a literal (the transitions filled later copy these); class 0 goes to the
  // root from every state.
  const delta = new Int32Array(n * K);
  for (let i = 0; i < delta.length; i++) {
    const t = next[i] as number;
    delta[i] = i % K === 0 ? 0 : t === NONE ? UNKNOWN : t * K + (bits[t] !== 0 ? OUT : 0);
  }
  const resolve = (row: number, cls: number): number => {
    let t = delta[row + cls] as number;
    if (t === UNKNOWN) {
      t = resolve((fail[row / K] as number) * K, cls);
      delta[row + cls] = t;
    }
    return t;
  };
  const rowBits = new Uint16Array(n * K);
  for (let st = 0; st < n; st++) rowBits[st * K] = bits[st] as number;
  return { delta, rowBits, ids, resolve };
}
