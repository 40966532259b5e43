import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          // test/contract/*.test.ts: contract checks that need no cluster (the operator's run is in
          // test/contract/operator/).
          include: [
            "src/**/*.test.ts",
            "test/unit/**/*.test.ts",
            "test/contract/*.test.ts",
            "bench/**/*.test.ts",
          ],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: ["test/unit/**", "test/contract/*.test.ts"],
          globalSetup: ["test/cluster/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
