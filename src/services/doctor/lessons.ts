/** Doctor's check of LESSONS.md: lessons Baton refused to read, each with its line and reason. */
import { parseLessonsMd } from "../../core/lessons/lessons-md.js";
import { isBatonError } from "../../errors.js";
import { lessonsPath, readLessonsText } from "../lessons/lessons-file.js";
import { type Check, SAMPLE } from "./check.js";

/**
 * A lesson block with an error is left out of every answer (search, inject, the hooks), so an
 * agent is never offered advice Baton could not read as written, and a path pattern that could
 * take too long to match (core/glob-limits.ts) is never run. Said here, so the user knows which
 * lessons are not in force.
 */
export const lessons: Check = {
  name: "lessons",
  reads: "LESSONS.md at the workspace root, parsed as every reader parses it",
  async run({ deps }) {
    const file = lessonsPath(deps.root);
    let text: string | undefined;
    try {
      text = readLessonsText(file);
    } catch (err) {
      // A link, a FIFO, a folder, too large (a repository may ship any of these): no lesson is offered.
      if (!isBatonError(err) || err.code !== "unsafe_path") throw err;
      return [
        {
          code: "lessons_unreadable",
          severity: "warning" as const,
          message: `${err.message}; no lesson is offered to agents meanwhile`,
          evidence: { file: "LESSONS.md" },
          fix: "replace LESSONS.md with a regular file (copy the text the link names, if it is yours)",
        },
      ];
    }
    if (text === undefined) return [];
    const errors = parseLessonsMd(text).diagnostics.filter((d) => d.severity === "error");
    if (errors.length === 0) return [];
    return [
      {
        code: "lessons_invalid",
        severity: "warning" as const,
        message: `${errors.length} problem(s) in LESSONS.md leave those lessons out of every answer: ${errors
          .slice(0, 3)
          .map((d) => `line ${d.line}: ${d.message}`)
          .join("; ")}`,
        evidence: { file: "LESSONS.md", lines: errors.slice(0, SAMPLE).map((d) => d.line), count: errors.length },
        fix: "edit LESSONS.md (see `baton lessons check`)",
      },
    ];
  },
};
