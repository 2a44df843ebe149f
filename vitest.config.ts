import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn processes; two cores on CI.
    maxWorkers: 2,
    setupFiles: ["test/setup.ts"],
    // Hooks spawned by tests never start a background server (docs/integrations.md, "The hook
    // server"); the tests of that feature ask for it and stop what they start.
    env: { BATON_HOOK_SERVER: "use" },
  },
});
