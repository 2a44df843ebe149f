/**
 * Chapter 3, Time travel: an agent goes round in circles on a file, the spiral is caught, the
 * user rolls back, a lesson is captured, and the next attempt starts with it.
 *
 * The agent's loop is what its hooks would run: a checkpoint of the file before each write,
 * the write, the project's check (a real `node` process), and `baton turn record` with the
 * check's failure fingerprint. Two different fixes fail; the third makes the first fix again,
 * which already failed, so that turn pauses the session (a new attempt that fails is still
 * progress; the same one again is a loop); the rollback, the lesson and its injection are the
 * real CLI too.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { failureFingerprint } from "../core/fingerprint.js";
import { type Chapter, check, type Json, nextOf, type Story, WIDTH, wrapWords } from "./shared.js";

const SESSION = "slugs";
const FILE = "src/slug.mjs";
const CHECK = "test/slug.check.mjs";
const S = ["--session", SESSION];

const HEADER = '// A URL slug from a title: "Hello, World!" → "hello-world".';

const ORIGINAL = `${HEADER}
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`;

/** The agent's three "fixes": the check fails the same way after each, and the third is the first again. */
const ATTEMPTS = [
  {
    edit: "let accented letters through the regex",
    text: `${HEADER}
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9à-ÿ]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`,
  },
  {
    edit: "replace è and é by hand",
    text: `${HEADER}
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/è/g, "e")
    .replace(/é/g, "e")
    .replace(/[^a-z0-9à-ÿ]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`,
  },
  {
    edit: "let accented letters through the regex",
    text: `${HEADER}
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9à-ÿ]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`,
  },
];

/** The attempt after the lesson. */
const FIX = String.raw`// A URL slug from a title: "Hello, World!" → "hello-world", "Crème brûlée" → "creme-brulee".
export function slugify(title) {
  return title
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`;

const CHECK_SCRIPT = `import { slugify } from "../src/slug.mjs";

const cases = [
  ["Crème brûlée", "creme-brulee"],
  ["Hello, World!", "hello-world"],
];
for (const [title, want] of cases) {
  if (slugify(title) !== want) {
    console.error(\`FAIL slugify(\${JSON.stringify(title)}) should be \${JSON.stringify(want)}\`);
    process.exit(1);
  }
}
console.log(\`ok: \${cases.length} cases pass\`);
`;

const LESSON = 'Strip accents with normalize("NFD") and a combining-marks regex, not letter by letter.';
const INTENT = "make slugify in src/slug.mjs turn accented letters into plain ones";

function sha256(b: Buffer | string): string {
  return createHash("sha256").update(b).digest("hex");
}

/** Run the project's check; its failure, if any, and that failure's fingerprint. */
function runCheck(s: Story): { code: number; line: string; fingerprint?: string } {
  const r = s.node([CHECK]);
  const line = (r.code === 0 ? r.stdout : r.stderr).trim().split("\n")[0] ?? "";
  const fp = r.code === 0 ? undefined : failureFingerprint(line);
  s.n.exec([`node ${CHECK}`], r.command, [`exit ${r.code}: ${line}`]);
  return { code: r.code, line, ...(fp ? { fingerprint: fp } : {}) };
}

async function tell(s: Story): Promise<Record<string, unknown>> {
  const n = s.n;

  // 1. A task with a failing check
  const fresh = !s.initialised;
  n.begin(
    "A task, a small module and its failing check",
    `${fresh ? "The workspace gets a journal (baton init). " : ""}A task session starts: make slugify handle accented letters. The project's check fails on "Crème brûlée"; the failure's fingerprint (the error text, normalised and hashed) is how Baton recognises it again.`,
  );
  s.ensureInit();
  s.write(FILE, ORIGINAL);
  s.write(CHECK, CHECK_SCRIPT);
  n.note([`wrote ${FILE} (${ORIGINAL.split("\n").length - 1} lines) and its check, ${CHECK}`]);
  s.say(["session", "start", "--flow", "task", "--id", SESSION, "--title", "Accented slugs"], (c) => [
    `session ${c.json.sessionId}, flow ${c.json.flow}, phase ${c.json.phase}`,
  ]);
  s.say(["event", SESSION, "start"], (c) => [`phase ${c.json.phase}`]);
  const first = runCheck(s);
  check(first.code === 1 && first.fingerprint, "the check should fail on the original", first);
  n.note([`failure fingerprint: ${first.fingerprint}`]);
  n.end({ sessionId: SESSION, file: FILE, check: { exitCode: first.code, failure: first.line, fingerprint: first.fingerprint } });

  // 2-4. Three attempts, each checkpointed and recorded
  const checkpoints: string[] = [];
  let spiral: Json;
  let paused: Json;
  for (const [i, attempt] of ATTEMPTS.entries()) {
    const last = i === ATTEMPTS.length - 1;
    n.begin(
      last ? `Attempt ${i + 1}: the spiral detector pauses the session` : `Attempt ${i + 1}: ${attempt.edit}`,
      last
        ? "The agent undoes its hand-made replacements and goes back to its first fix, the very edit that already failed. The turn that records it completes a spiral (the file went back to a version it had, by the same change): the session pauses, and the answer names the checkpoint to roll back to, the one taken before the first failing write."
        : i === 0
          ? "Before each write the agent checkpoints the file it is about to change (its hooks do this); then it writes, runs the check, and records the turn with the checkpoint and the failure's fingerprint, the spiral detector's input."
          : "The agent tries something else, and the check fails the same way: a new attempt, so not a loop yet.",
    );
    const cp = s.say(["checkpoint", ...S, "--files", FILE], (c) => [
      `${c.json.checkpointId}: ${c.json.checkpoint.files.map((f: Json) => `${f.path} (${f.size} bytes)`).join(", ")}`,
    ]).json.checkpointId as string;
    checkpoints.push(cp);
    s.write(FILE, attempt.text);
    n.note([`wrote ${FILE}: ${attempt.edit} (${attempt.text.split("\n").length - 1} lines)`]);
    const result = runCheck(s);
    check(result.code === 1 && result.fingerprint === first.fingerprint, `attempt ${i + 1} should fail with the same failure`, result);
    const turn = s.say(
      [
        "turn",
        "record",
        ...S,
        "--tool",
        "Edit",
        "--args",
        JSON.stringify({ file: FILE, edit: attempt.edit }),
        "--file",
        FILE,
        "--status",
        "error",
        "--fingerprint",
        result.fingerprint as string,
        "--checkpoint",
        cp,
      ],
      (c) =>
        c.json.detected
          ? [
              wrapWords(`SPIRAL DETECTED (${c.json.spiral.pattern}): ${c.json.spiral.summary}`, "", WIDTH - 7).join("\n"),
              `session paused; next action ${c.json.nextAction?.action}: roll back to ${c.json.spiral.proposedCheckpoint}, or take over`,
            ]
          : [`turn seq ${c.json.turn.seq} recorded (error ${result.fingerprint}); no spiral yet`],
    ).json;
    if (!last) {
      check(!turn.detected && !turn.spiral.paused, `attempt ${i + 1} should not pause the session yet`, turn.spiral);
      n.end({
        attempt: i + 1,
        checkpoint: cp,
        edit: attempt.edit,
        exitCode: result.code,
        fingerprint: result.fingerprint,
        detected: false,
      });
      continue;
    }
    spiral = turn.spiral;
    check(turn.detected === true && spiral.paused === true, "the first fix made again should be detected as a spiral", turn);
    check(spiral.pattern === "file_churn", "the spiral should be file_churn", spiral);
    check(
      spiral.proposedCheckpoint === checkpoints[0],
      `the proposed checkpoint should be ${checkpoints[0]}, taken before attempt 1`,
      spiral,
    );
    check(turn.nextAction?.action === "ask_user", "a paused session's next action should be ask_user", turn.nextAction);
    paused = turn;
    n.end({
      attempt: i + 1,
      checkpoint: cp,
      edit: attempt.edit,
      exitCode: result.code,
      fingerprint: result.fingerprint,
      detected: true,
      spiral: { pattern: spiral.pattern, turns: spiral.turns, proposedCheckpoint: spiral.proposedCheckpoint },
      nextAction: turn.nextAction.action,
    });
  }
  const proposed = checkpoints[0] as string;

  // 5. Status asks the user
  n.begin(
    "Any fresh process sees the pause and the choice",
    "The pause is in the journal, not in the agent's memory: baton status gives ask_user, with the evidence and two choices, roll back to the proposed checkpoint or take over by hand. (Agent hooks refuse further writes meanwhile.)",
  );
  const st5 = s.say(["status", ...S], (c) => {
    const x = c.json.sessions[0];
    return [
      ...nextOf(x),
      ...(x.nextAction.choices as Json[]).map((ch) => wrapWords(`${ch.choice}: ${ch.description}`, "", WIDTH - 7).join("\n")),
    ];
  });
  const s5 = st5.json.sessions[0];
  check(s5.nextAction?.action === "ask_user" && s5.spiral?.paused === true, "status should say ask_user while paused", s5.nextAction);
  const rollbackChoice = (s5.nextAction.choices as Json[]).find((c) => c.choice === "rollback");
  check(
    rollbackChoice?.command?.includes(`--to ${proposed}`) && s5.nextAction.reason.includes(proposed),
    `the next action should name the rollback to ${proposed}`,
    s5.nextAction,
  );
  n.end({
    nextAction: s5.nextAction.action,
    pattern: s5.spiral.pattern,
    proposedCheckpoint: s5.spiral.proposedCheckpoint,
    choices: (s5.nextAction.choices as Json[]).map((c) => c.choice),
  });

  // 6. Dry run, then roll back
  n.begin(
    "The user previews the rollback, then rolls back",
    `The user chooses the rollback. A dry run shows the diff first and changes nothing; then the rollback restores ${FILE} from ${proposed}, after a safety checkpoint that would undo it.`,
  );
  const broken = s.read(FILE);
  const dry = s.say(["rollback", ...S, "--to", proposed, "--dry-run"], (c) => [
    `would restore ${c.json.restored} file(s); nothing changed yet. The diff, current → restored:`,
    (c.json.diff as string).trimEnd(),
  ]);
  check(
    dry.json.dryRun === true && typeof dry.json.diff === "string" && dry.json.diff.includes(`--- a/${FILE}`),
    "the dry run should show the diff",
    dry.json,
  );
  check(s.read(FILE) === broken, "the dry run should change nothing", s.read(FILE));
  const rb = s.say(["rollback", ...S, "--to", proposed], (c) => [
    `${c.json.rollbackId}: restored ${c.json.restored}, removed ${c.json.removed}; safety checkpoint ${c.json.safety}`,
  ]).json;
  const bytes = readFileSync(s.path(FILE));
  const restored = bytes.equals(Buffer.from(ORIGINAL, "utf8"));
  n.note([`${FILE} is ${restored ? "byte for byte the original" : "NOT the original"} again (sha256 ${sha256(bytes).slice(0, 16)}…)`]);
  check(rb.restored === 1 && rb.target?.id === proposed, `the rollback should restore ${FILE} from ${proposed}`, rb);
  check(restored, `${FILE} should be byte for byte the original`, bytes.toString("utf8"));
  n.end({
    dryRun: { restored: dry.json.restored, diffLines: dry.json.diff.trimEnd().split("\n").length },
    rollbackId: rb.rollbackId,
    target: rb.target.id,
    safety: rb.safety,
    restored: rb.restored,
    restoredByteForByte: restored,
    sha256: sha256(bytes),
  });

  // 7. Lesson, unpause
  n.begin(
    "A lesson is captured from the rollback; the agent may go on",
    "Status suggests what to do after a rollback: write down in one sentence what to do differently. The lesson goes to LESSONS.md, linked to the rollback and triggered by the file's path. Then the user lifts the pause.",
  );
  const st7 = s.say(["status", ...S], (c) => {
    const x = c.json.sessions[0];
    return [
      `next action ${x.nextAction.action} (still paused)`,
      ...(x.suggestions as Json[]).map((sg) => `suggestion ${sg.action}: ${sg.command}`),
    ];
  });
  const suggestion = (st7.json.sessions[0].suggestions as Json[]).find((sg) => sg.action === "capture_lesson");
  check(
    suggestion?.command?.includes(`--from-rollback ${rb.rollbackId}`),
    "status should suggest capturing a lesson",
    st7.json.sessions[0],
  );
  const added = s.say(["lessons", "add", LESSON, ...S, "--from-rollback", rb.rollbackId, "--path", FILE], (c) => [
    `${c.json.lesson.id} in ${c.json.file.slice(s.root.length + 1)}, from rollback ${c.json.lesson.rollback}, paths ${c.json.lesson.paths.join(", ")}`,
  ]).json;
  const lessonId = added.lesson.id as string;
  check(
    added.lesson.rollback === rb.rollbackId && added.lesson.paths.includes(FILE),
    "the lesson should name the rollback and the file",
    added,
  );
  const resumed = s.say(["resume", SESSION, "--unpause", "--reason", `rolled back to ${proposed}; lesson ${lessonId}`], (c) => [
    `unpaused: ${c.json.unpaused}; next action ${c.json.nextAction.action}`,
  ]).json;
  check(resumed.unpaused === true && resumed.nextAction.action === "continue_task", "resume --unpause should lift the pause", resumed);
  n.end({
    suggestion: suggestion.action,
    lessonId,
    rollback: added.lesson.rollback,
    unpaused: true,
    nextAction: resumed.nextAction.action,
  });

  // 8. Inject
  n.begin(
    "The next attempt starts with the lesson",
    "Before the agent tries again, baton lessons inject ranks the lessons for what it is about to do and returns the block to put in its prompt (agent hooks add it for the agent).",
  );
  const inj = s.say(["lessons", "inject", ...S, "--intent", INTENT], (c) => [
    (c.json.markdown as string)
      .split("\n")
      .map((l) => wrapWords(l, "", WIDTH - 7).join("\n"))
      .join("\n"),
  ]).json;
  const included = (inj.included as Json[]).map((x) => x.id);
  check(included.includes(lessonId) && inj.markdown.includes(LESSON), `the injected block should hold lesson ${lessonId}`, inj);
  n.end({ intent: INTENT, included, markdown: inj.markdown });

  // 9. The fix
  n.begin(
    "Following the lesson, the check passes",
    "The agent applies the lesson: a checkpoint, one write, the check passes, and the turn is recorded as progress. The task completes.",
  );
  const cp9 = s.say(["checkpoint", ...S, "--files", FILE], (c) => [c.json.checkpointId]).json.checkpointId as string;
  s.write(FILE, FIX);
  n.note([`wrote ${FILE}: normalize("NFD"), drop the combining marks, then the slug regex`]);
  const ok = runCheck(s);
  check(ok.code === 0, "the check should pass with the fix", ok);
  const good = s.say(
    [
      "turn",
      "record",
      ...S,
      "--tool",
      "Edit",
      "--args",
      JSON.stringify({ file: FILE, edit: "normalize, then strip marks" }),
      "--file",
      FILE,
      "--status",
      "success",
      "--checkpoint",
      cp9,
      "--progress",
    ],
    (c) => [`turn seq ${c.json.turn.seq} recorded (success, progress); spiral paused: ${c.json.spiral.paused}`],
  ).json;
  check(!good.detected && !good.spiral.paused, "a passing turn should not pause the session", good);
  const done = s.say(["complete", SESSION], (c) => [`phase ${c.json.phase}`]).json;
  check(done.phase === "done", "complete should move the task to done", done);
  n.end({ checkpoint: cp9, check: { exitCode: ok.code, output: ok.line }, phase: done.phase });

  return {
    sessionId: SESSION,
    file: FILE,
    fingerprint: first.fingerprint,
    pattern: spiral.pattern,
    pausedAtSeq: paused.turn.seq,
    proposedCheckpoint: proposed,
    rollbackId: rb.rollbackId,
    restoredByteForByte: restored,
    lessonId,
    phase: done.phase,
  };
}

export const timeTravelChapter: Chapter = {
  number: 3,
  name: "Time travel",
  tagline:
    "An agent goes round in circles on a file; the spiral is caught, the user rolls back, and a lesson is captured and injected for the next attempt.",
  tell,
  summary: (r) => [
    `Three fixes of ${r.file} failed the same way (${r.fingerprint}); the third turn paused the session (${r.pattern}) and proposed checkpoint ${r.proposedCheckpoint}.`,
    `Rollback ${r.rollbackId} restored ${r.file} byte for byte; lesson ${r.lessonId} was injected into the next attempt, which passed, and the task is ${r.phase}.`,
  ],
};
