/**
 * Which build of Baton this is: its version and a hash of its sources, set by scripts/build.mjs
 * ("dev" when run from source). A hook hands its event only to a server of the same build
 * (docs/integrations.md, "The hook server"): another build may read it differently.
 */
declare const BATON_BUILD: string | undefined;

export const BUILD: string = typeof BATON_BUILD === "string" ? BATON_BUILD : "dev";
