import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/support/global-setup.ts"],
    // Each file gets its own database, so files run in parallel; two cores, two workers.
    pool: "forks",
    // Files share their worker's modules: importing the platform once per worker, not once per file, took the
    // import time of coupons' and deals' 15 files from 286 s to 29 s. Files share no state but the modules':
    // each starts its own platform on its own database, and stubbed environment variables are put back.
    isolate: false,
    unstubEnvs: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
