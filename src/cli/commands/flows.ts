/** Listing and validating flows. */
import { badInput } from "../../errors.js";
import { formatProblems, loadFlowFile } from "../../platform/flow-file.js";
import { writeStderr } from "../../platform/output.js";
import type { Ctx } from "../context.js";

export async function flowsList(ctx: Ctx): Promise<void> {
  const b = await ctx.open();
  const reports = await b.flows.reports();
  const flows: { name: string; builtin: boolean; initial: string; phases: string[]; description: string | undefined }[] = [];
  for (const name of await b.flows.names()) {
    const f = await b.flows.get(name);
    flows.push({
      name,
      builtin: !reports.some((r) => r.name === name && r.problems.length === 0), // a file claiming a built-in name is reported, not used
      initial: f.initial,
      phases: Object.keys(f.phases),
      description: f.description,
    });
  }
  const invalid = reports.filter((r) => r.problems.length > 0);
  ctx.out({ flows, invalid }, () =>
    [
      ...flows.map((f) => `${f.name}${f.builtin ? " (built in)" : ""}: ${f.phases.join(" → ")}`),
      ...invalid.map((r) => `INVALID ${r.file}: ${formatProblems(r.problems)}`),
    ].join("\n"),
  );
}

export async function flowsValidate(ctx: Ctx, files: string[]): Promise<void> {
  if (files.length === 0) throw badInput("name one or more flow files, e.g. baton flows validate .baton/flows/review.json");
  const results = await Promise.all(
    files.map(async (file) => {
      const { problems, name } = await loadFlowFile(file);
      return { file, name, valid: problems.length === 0, problems };
    }),
  );
  const bad = results.filter((r) => !r.valid);
  const describe = (list: typeof results) =>
    list
      .map((r) =>
        r.valid
          ? `ok ${r.file} (${r.name})`
          : `INVALID ${r.file}\n${r.problems.map((p) => `  ${p.line ? `line ${p.line}:${p.column} ` : ""}${p.path || "(file)"}: ${p.message}`).join("\n")}`,
      )
      .join("\n");
  ctx.out({ results }, () => describe(results));
  // Under --quiet the problems are the failure, and a failure is always said (on stderr).
  if (bad.length && ctx.quiet && !ctx.json) writeStderr(`${describe(bad)}\n`);
  if (bad.length) process.exitCode = 2;
}
