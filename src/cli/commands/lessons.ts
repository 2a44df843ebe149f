/** `baton lessons ...`: LESSONS.md at the workspace root, searched and injected into prompts. */
import type { Baton } from "../../api.js";
import type { Lesson, LessonDiagnostic } from "../../core/lessons/lessons-md.js";
import type { LessonIntent } from "../../core/lessons/rank.js";
import { BatonError, badInput, isBatonError } from "../../errors.js";
import { writeStderr } from "../../platform/output.js";
import { type Ctx, parseIntOption } from "../context.js";

type S = { session?: string };

const NO_MATCH = "No lessons match.";
type IntentOptions = S & { intent?: string; tool?: string; path?: string[]; fingerprint?: string };

export async function lessonsAdd(
  ctx: Ctx,
  text: string,
  o: S & {
    tool?: string[];
    path?: string[];
    fingerprint?: string[];
    workspace?: boolean;
    pin?: boolean;
    expires?: string;
    fromRollback?: string;
    id?: string;
  },
): Promise<void> {
  const b = await ctx.open();
  let sessionId: string | undefined;
  if (o.workspace) {
    // A workspace lesson belongs to no session; its capture is journaled in the session named
    // (or the single active one), so a rollback it came from shows the link. With several
    // active sessions that link needs --session; a lesson without one is just written.
    try {
      sessionId = await optionalSession(b, o.session);
    } catch (err) {
      if (!isBatonError(err, "ambiguous_session") || o.fromRollback) throw err;
    }
  } else {
    try {
      sessionId = await b.sessions.resolve(o.session);
    } catch (err) {
      if (isBatonError(err, "not_found") && !o.session) {
        throw new BatonError(
          "not_found",
          "no active session to attach the lesson to; name one with --session <id>, or pass --workspace for a workspace-wide lesson",
        );
      }
      throw err;
    }
  }
  const r = await b.lessons.add({
    text,
    scope: o.workspace ? "workspace" : "session",
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(o.tool ? { tools: o.tool } : {}),
    ...(o.path ? { paths: o.path } : {}),
    ...(o.fingerprint ? { fingerprints: o.fingerprint } : {}),
    ...(o.fromRollback ? { rollback: o.fromRollback } : {}),
    ...(o.pin ? { pinned: true } : {}),
    ...(o.expires ? { expires: o.expires } : {}),
    ...(o.id ? { id: o.id } : {}),
  });
  report(ctx, r.diagnostics, r.warnings);
  ctx.out(
    {
      lesson: r.lesson,
      file: r.file,
      seq: r.journaled?.event.seq,
      diagnostics: r.diagnostics,
      ...(r.warnings ? { warnings: r.warnings } : {}),
    },
    () =>
      `Added lesson ${r.lesson.id} (${r.lesson.scope}${r.lesson.sessionId ? ` ${r.lesson.sessionId}` : ""}) to ${r.file}${r.lesson.rollback ? `, from rollback ${r.lesson.rollback}` : ""}`,
  );
}

export async function lessonsList(ctx: Ctx, o: S & { all?: boolean }): Promise<void> {
  const b = await ctx.open();
  const r = await b.lessons.list({ ...(o.session ? { sessionId: o.session } : {}), ...(o.all ? { all: true } : {}) });
  report(ctx, r.diagnostics);
  ctx.out(r, () => (r.lessons.length === 0 ? `No lessons in ${r.file}.` : r.lessons.map((l) => renderLesson(l, l.expired)).join("\n")));
}

export async function lessonsSearch(ctx: Ctx, query: string[], o: IntentOptions & { k?: string }): Promise<void> {
  const b = await ctx.open();
  const intent = await readIntent(b, o, query.join(" "));
  const k = parseIntOption(o.k, "--k", 1);
  const r = await b.lessons.search(intent, k !== undefined ? { k } : {});
  report(ctx, r.diagnostics);
  ctx.out(r, () =>
    r.results.length === 0
      ? NO_MATCH
      : r.results
          .map((x) => {
            const why = [
              x.why.text > 0 ? `text ${x.why.text}` : "",
              x.why.tool ? "tool" : "",
              x.why.path ? `path ${x.why.path}` : "",
              x.why.fingerprint ? "fingerprint" : "",
              x.why.pinned ? "pinned" : "",
            ].filter(Boolean);
            return `${x.score.toFixed(2)}  ${renderLesson(x.lesson, false)}\n      matched: ${why.join(", ")}`;
          })
          .join("\n"),
  );
}

export async function lessonsInject(ctx: Ctx, o: IntentOptions & { k?: string; maxChars?: string }): Promise<void> {
  const b = await ctx.open();
  const intent = await readIntent(b, o, undefined);
  const k = parseIntOption(o.k, "--k", 0);
  const maxChars = parseIntOption(o.maxChars, "--max-chars", 1);
  const r = await b.lessons.inject(intent, { ...(k !== undefined ? { k } : {}), ...(maxChars !== undefined ? { maxChars } : {}) });
  report(ctx, r.diagnostics);
  // The block to paste into a prompt; when there is none, why (an empty line told nothing).
  ctx.out(r, () =>
    r.markdown !== ""
      ? r.markdown
      : r.omitted.length > 0
        ? `No lesson fits in the --max-chars limit: ${r.omitted.length} match (${r.omitted.join(", ")}); raise --max-chars.`
        : k === 0
          ? "No lessons: --k 0 asks for none."
          : NO_MATCH,
  );
}

export async function lessonsRemove(ctx: Ctx, id: string): Promise<void> {
  const b = await ctx.open();
  const r = await b.lessons.remove(id);
  report(ctx, [], r.warnings);
  ctx.out(r, () => `Removed lesson ${id} from ${r.file}`);
}

export async function lessonsCheck(ctx: Ctx): Promise<void> {
  const b = await ctx.open();
  const r = await b.lessons.check();
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    throw new BatonError(
      "lessons_file_invalid",
      `${r.file}: ${errors.length} block(s) do not parse (first: line ${errors[0]?.line}: ${errors[0]?.message}); fix or remove them (\`baton lessons rm <id>\`)`,
      { file: r.file, lessons: r.lessons, diagnostics: r.diagnostics },
    );
  }
  report(ctx, r.diagnostics);
  ctx.out(r, () => `${r.file}: ${r.lessons} lesson(s), no errors${r.diagnostics.length ? ` (${r.diagnostics.length} warning(s))` : ""}.`);
}

/** The intent: --intent as prompt text or a JSON object, plus the individual flags. */
async function readIntent(b: Baton, o: IntentOptions, query: string | undefined): Promise<LessonIntent> {
  const intent: LessonIntent = {};
  const raw = o.intent?.trim();
  if (raw?.startsWith("{")) {
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch (err) {
      throw badInput(
        `--intent is not valid JSON (${(err as Error).message}); e.g. --intent '{"tool":"Edit","paths":["src/a.ts"],"prompt":"..."}'`,
      );
    }
    const j = v as Record<string, unknown>;
    const str = (k: string) => {
      if (j[k] === undefined) return undefined;
      if (typeof j[k] !== "string") throw badInput(`--intent: "${k}" must be a string`);
      return j[k] as string;
    };
    for (const k of Object.keys(j)) {
      if (!["tool", "paths", "prompt", "fingerprint", "sessionId"].includes(k))
        throw badInput(`--intent: "${k}" is not an intent field (fields: tool, paths, prompt, fingerprint, sessionId)`);
    }
    if (j.paths !== undefined && !(Array.isArray(j.paths) && j.paths.every((p) => typeof p === "string")))
      throw badInput('--intent: "paths" must be a list of strings');
    const tool = str("tool");
    const prompt = str("prompt");
    const fingerprint = str("fingerprint");
    const sessionId = str("sessionId");
    if (tool !== undefined) intent.tool = tool;
    if (prompt !== undefined) intent.prompt = prompt;
    if (fingerprint !== undefined) intent.fingerprint = fingerprint;
    if (sessionId !== undefined) intent.sessionId = sessionId;
    if (j.paths) intent.paths = j.paths as string[];
  } else if (raw) {
    intent.prompt = raw;
  }
  if (query) intent.prompt = [intent.prompt, query].filter(Boolean).join(" ");
  if (o.tool) intent.tool = o.tool;
  if (o.path?.length) intent.paths = [...(intent.paths ?? []), ...o.path];
  if (o.fingerprint) intent.fingerprint = o.fingerprint;
  const sessionId = intent.sessionId ?? (await optionalSession(b, o.session));
  if (sessionId !== undefined) intent.sessionId = sessionId;
  return intent;
}

/** The session named, else the single active one, else none (several active is still an error). */
async function optionalSession(b: Baton, named: string | undefined): Promise<string | undefined> {
  try {
    return await b.sessions.resolve(named);
  } catch (err) {
    if (isBatonError(err, "not_found") && !named) return undefined;
    throw err;
  }
}

function renderLesson(l: Lesson, expired: boolean): string {
  const tags = [
    l.scope === "session" ? `session ${l.sessionId}` : "workspace",
    l.pinned ? "pinned" : "",
    expired ? "EXPIRED" : l.expires ? `expires ${l.expires}` : "",
    l.rollback ? `from rollback ${l.rollback}` : "",
  ].filter(Boolean);
  const triggers = [
    l.tools.length ? `tools: ${l.tools.join(", ")}` : "",
    l.paths.length ? `paths: ${l.paths.join(", ")}` : "",
    l.fingerprints.length ? `fingerprints: ${l.fingerprints.join(", ")}` : "",
  ].filter(Boolean);
  return [
    `${l.id}  (${tags.join(", ")})`,
    `    ${l.text.replace(/\s+/g, " ")}`,
    ...(triggers.length ? [`    ${triggers.join(" · ")}`] : []),
  ].join("\n");
}

/** Problems in LESSONS.md go to stderr in human mode (under --json they are in the result). */
/** Problems in LESSONS.md, and what went wrong after a write was made (`warnings`), on stderr (JSON output carries both). */
function report(ctx: Ctx, diagnostics: readonly LessonDiagnostic[], warnings: readonly string[] = []): void {
  if (ctx.json) return;
  for (const d of diagnostics) writeStderr(`LESSONS.md:${d.line}: ${d.severity}: ${d.message}\n`);
  for (const w of warnings) writeStderr(`warning: ${w}\n`);
}
