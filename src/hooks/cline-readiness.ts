/**
 * Whether Cline CLI will run the hook files Baton installed (cline 3.0.65, checked with runs of
 * it): it has no switch that turns them off, but it reads a project's `.clinerules/hooks/` at
 * the git repository's root (the folder it starts in, outside a repository), so a project whose
 * Baton root is below its repository's root is not where it looks.
 */
import { gitTop, spellings } from "./copilot-setup.js";
import type { Readiness, SetupPlace } from "./readiness.js";

export function clineReadiness(o: SetupPlace): Readiness {
  const remaining: string[] = [];
  const top = o.scope === "project" ? gitTop(o.root) : undefined;
  if (top !== undefined && spellings(top)[0] !== spellings(o.root)[0])
    remaining.push(
      `Cline CLI reads .clinerules/hooks/ at the repository's root, ${top}, not in ${o.root}: install from the repository's root (\`baton hooks install cline --root ${top}\`), or with --user.`,
    );
  return { willRun: remaining.length === 0, remaining };
}
