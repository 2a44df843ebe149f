/**
 * The redaction engine, loaded on first use. Its modules build their tables as they load (a few
 * milliseconds), and a process that only reads (`baton status`, `baton resume`) never redacts:
 * what appends or records asks for it here.
 */
type Redaction = typeof import("./redact.js");

let loaded: Redaction | undefined;

/** The engine when it has been loaded already (a caller in a hot path then awaits nothing). */
export function redactionLoaded(): Redaction | undefined {
  return loaded;
}

export async function loadRedaction(): Promise<Redaction> {
  loaded ??= await import("./redact.js");
  return loaded;
}
