import type { FlowDefinition } from "./flow.js";

/**
 * The live design-tool lifecycle: a browser asks for variants of a piece of UI, the agent
 * writes them into the source inside marker-delimited wrappers, the user cycles and tunes
 * them in the browser, then accepts or discards; the agent applies the result.
 *
 * Source markers are part of the truth: status scans the session's files, so a crash between
 * a source edit and its journal event is repaired from the files (see `markerRules`).
 */
export const LIVE_VARIANT_MARKERS = Object.freeze({
  variantsStart: "baton-variants-start",
  variantsEnd: "baton-variants-end",
  original: "baton-original",
  variant: "baton-variant=",
  carbonize: "baton-carbonize-start",
  params: "baton-param-values",
});

const M = LIVE_VARIANT_MARKERS;

const waitForBrowser = {
  action: "poll_for_pending_event",
  reason: "Nothing is pending for the agent; wait for the user's next browser event.",
  command: "baton resume {session} --json",
};

export const liveVariantFlow: FlowDefinition = {
  name: "live-variant",
  description: "Live design variants: configuring → generating → source_wrapped → variants_written → cycling → accept/discard → complete.",
  initial: "configuring",
  phases: {
    configuring: {
      needsPresence: true,
      on: { generate: { to: "generating" } },
      next: waitForBrowser,
    },
    generating: {
      on: { source_wrapped: { to: "source_wrapped" }, generate: {}, discard: { to: "discard_pending" } },
      next: {
        action: "write_variants",
        reason: "The user asked for variants; wrap the source element in variant markers, then record the file.",
        command: `baton event {session} source_wrapped --actor agent --data '{"file":"<path>"}'`,
      },
    },
    source_wrapped: {
      on: { variants_written: { to: "variants_written" }, generate: { to: "generating" }, discard: { to: "discard_pending" } },
      next: {
        action: "write_variants",
        reason: "The source is wrapped in {context.file}; write the variants into the wrapper, then record how many.",
        command: `baton event {session} variants_written --actor agent --data '{"count":<n>,"expected":<n>}'`,
      },
    },
    variants_written: {
      needsPresence: true,
      on: {
        variants_written: {},
        cycling: { to: "cycling" },
        accept: { to: "accept_pending" },
        discard: { to: "discard_pending" },
        generate: { to: "generating" },
      },
      next: [
        {
          when: { lt: ["context.count", "context.expected"] },
          action: "continue_writing_variants",
          reason: "Only {context.count} of {context.expected} variants are written in {context.file}; write the rest.",
          command: `baton event {session} variants_written --actor agent --data '{"count":<n>,"expected":<n>}'`,
        },
        waitForBrowser,
      ],
    },
    cycling: {
      needsPresence: true,
      on: { accept: { to: "accept_pending" }, discard: { to: "discard_pending" }, generate: { to: "generating" }, cycling: {} },
      next: waitForBrowser,
    },
    accept_pending: {
      fenced: true,
      on: {
        accepted: [{ when: { eq: ["data.carbonize", true] }, to: "accepted_source_pending" }, { to: "complete" }],
        complete: { to: "complete" },
      },
      next: {
        action: "run_accept_cleanup",
        reason:
          "The user accepted variant {context.variantId} with params {context.paramValues}; write it into {context.file} and remove the other variants.",
        command: `baton event {session} accepted --actor agent --data '{"carbonize":true}'`,
      },
    },
    discard_pending: {
      fenced: true,
      on: { discarded: { to: "complete" }, complete: { to: "complete" } },
      next: {
        action: "restore_discard",
        reason: "The user discarded the variants; restore the original source in {context.file}.",
        command: "baton event {session} discarded --actor agent",
      },
    },
    accepted_source_pending: {
      fenced: true,
      on: { complete: { to: "complete" } },
      next: {
        action: "run_carbonize_cleanup",
        reason: "The accepted variant is in {context.file} with carbonize markers; make it permanent source and remove the markers.",
        command: "baton complete {session}",
      },
    },
    complete: { terminal: true, next: { action: "none", reason: "The live session is complete.", command: "" } },
  },
  global: {
    checkpoint: {},
    steer: {},
    exit: { fenceable: false },
  },
  // Lanes: accept/discard first, then steering, then generate; a closed tab last, so it never
  // masks real work.
  work: {
    accept: { priority: 10, doneBy: ["accepted", "complete"] },
    discard: { priority: 10, doneBy: ["discarded", "complete"] },
    steer: { priority: 20, doneBy: ["variants_written"] },
    generate: { priority: 30, doneBy: ["source_wrapped"] },
    exit: { priority: 90 },
  },
  completeEvent: "complete",
  presence: {
    leave: "exit",
    action: {
      action: "ask_user_to_reopen_browser",
      reason: "The browser tab was closed and this phase needs the user in the browser; ask them to reopen it.",
      command: "baton serve",
    },
  },
  markers: [
    { name: "carbonize", pattern: M.carbonize },
    { name: "variants", pattern: M.variantsStart },
    { name: "original", pattern: M.original },
    { name: "variant", pattern: M.variant },
    { name: "params", pattern: M.params },
  ],
  markerRules: [
    {
      present: ["carbonize"],
      action: "run_carbonize_cleanup",
      reason: "Carbonize markers remain in the source: make the accepted variant permanent and remove the markers.",
      command: "baton complete {session}",
    },
    {
      phases: ["configuring", "generating", "source_wrapped", "variants_written", "cycling"],
      present: ["variants", "original"],
      absent: ["variant"],
      action: "continue_writing_variants",
      reason: "The variants wrapper in the source holds only the original; write the variants.",
      command: `baton event {session} variants_written --actor agent --data '{"count":<n>,"expected":<n>}'`,
    },
    {
      phases: ["accept_pending", "discard_pending", "accepted_source_pending"],
      absent: ["carbonize", "variants"],
      action: "acknowledge_completion",
      reason: "The source is clean (no variant or carbonize markers): the cleanup is done but its completion was never recorded.",
      command: "baton complete {session}",
    },
  ],
  generatedPaths: ["dist/**", "build/**", "out/**", ".next/**", "**/*.generated.*", "**/generated/**"],
  generatedAction: {
    action: "persist_fallback_to_true_source",
    reason: "Markers are in a generated or served file that a rebuild would overwrite; persist the change to the true source.",
    command: "baton resume {session} --json",
  },
};
