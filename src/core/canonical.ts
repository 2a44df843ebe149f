/**
 * Canonical JSON, hashes and ids. node:crypto is loaded on first use, not at start-up: it
 * pulls in Node's stream machinery (~5-9 ms measured), and `baton status` never needs it.
 */
import { createRequire } from "node:module";

type Crypto = typeof import("node:crypto");
let crypto: Crypto | undefined;

function nodeCrypto(): Crypto {
  crypto ??= createRequire(import.meta.url)("node:crypto") as Crypto;
  return crypto;
}

/** JSON with object keys sorted at every depth: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v as object).sort()) out[k] = (v as Record<string, unknown>)[k];
      return out;
    }
    return v;
  });
}

export function sha256(text: string | Uint8Array): string {
  return nodeCrypto().createHash("sha256").update(text).digest("hex");
}

/** A random lowercase hex string of `bytes` bytes. */
export function randomHex(bytes: number): string {
  return nodeCrypto().randomBytes(bytes).toString("hex");
}

export function randomId(): string {
  return nodeCrypto().randomUUID();
}

/**
 * FNV-1a, 64 bits as two 32-bit lanes, over UTF-16 code units: a fast checksum that detects a
 * damaged cache entry (the snapshot). Not a security boundary: anyone who can write the
 * database can also rewrite the checksum.
 */
export function checksum(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x0100019d);
  }
  return `fnv1a:${(h1 >>> 0).toString(16).padStart(8, "0")}${(h2 >>> 0).toString(16).padStart(8, "0")}`;
}
