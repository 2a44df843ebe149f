import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn processes; two cores on CI.
    maxWorkers: 2,
    setupFiles: ["test/setup.ts"],
  },
});
