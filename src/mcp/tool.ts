/**
 * How a Baton MCP tool is declared: a strict zod object (every field described, enums where the
 * values are fixed, bounds on numbers and lists) and a function of the `Baton` facade. From the
 * rest of Baton only src/errors.ts and types are imported: this module and its siblings are
 * bundled with the SDK into their own file (see scripts/build.mjs) and get the `Baton` from the
 * CLI at run time.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Baton } from "../api.js";
import { isBatonError } from "../errors.js";

export interface BatonTool<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject<S>;
  annotations: ToolAnnotations;
  run(baton: Baton, args: z.output<z.ZodObject<S>>): Promise<unknown>;
}

/** Declare a tool; unknown argument names are refused (`additionalProperties: false`). */
export function defineTool<S extends z.ZodRawShape>(t: Omit<BatonTool<S>, "input"> & { input: S }): BatonTool {
  return { ...t, input: z.strictObject(t.input) } as unknown as BatonTool;
}

/** Tools that only read (status marks provably dead runs crashed, which is safe to repeat). */
export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Appends to the journal; repeating the call appends again unless an idempotency id is given. */
export const APPEND: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Overwrites or removes workspace files. */
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

// Fields shared by several tools. Session ids follow the journal's rule (1-128 letters, digits,
// '.', '_' or '-', starting with a letter or digit).
export const sessionId = () =>
  z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "a session id: 1-128 letters, digits, '.', '_' or '-'")
    .optional()
    .describe("The session. Default: the single active session (refused with ambiguous_session, listing them, when several are active).");

export const text = (max: number, what: string) => z.string().trim().min(1).max(max).describe(what);

export const paths = (what: string, max = 200) => z.array(z.string().min(1).max(1024)).min(1).max(max).describe(what);

/** The session named, else the single active one. */
export function session(b: Baton, id: string | undefined): Promise<string> {
  return b.sessions.resolve(id);
}

/** The session named, else the single active one, else none (several active is still an error). */
export async function optionalSession(b: Baton, id: string | undefined): Promise<string | undefined> {
  try {
    return await b.sessions.resolve(id);
  } catch (err) {
    if (isBatonError(err, "not_found") && id === undefined) return undefined;
    throw err;
  }
}

/** Drop undefined fields (the facade's inputs are optional properties, not `T | undefined`). */
export function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
