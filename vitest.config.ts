import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import { LongRunningFirst } from "./test/sequencer.js";

/**
 * Four tiers, all run by `npm test`: first `unit` and `slow` together, then `integration`, then
 * `serial`.
 *
 * - `unit` (`npm run test:unit`, the fast tier): in-process tests of src/, the architecture and
 *   function-size checks, the contract checks that need no cluster, the bench's own tests.
 * - `slow` (`npm run test:slow`): no cluster either, but each file starts the CLI or the bench in
 *   child processes (tsx start-up and module graph, seconds each) or runs a long in-process search
 *   (backtests of whole traces, every ladder step): 4 s or more each on an idle core.
 * - `integration` (`npm run test:integration`): files under test/ against the shared
 *   kube-apiserver/etcd of test/cluster/global-setup.ts (or a private one). Its files run in
 *   parallel: each makes its own namespaces and names, an operator watching only those, its own
 *   emulator, Prometheus and servers on free ports, and a private control plane where it changes
 *   cluster-wide objects or restarts the API server. Most operator tests step the operator's clock
 *   a pass at a time (test/operator/stepped-clock.ts); the rest run it at a multiple of real time.
 * - `serial` (`npm run test:serial`): the integration files named in SERIAL, one at a time.
 */
/** Workers of the CPU-bound tiers: one per core (at least 2). */
const CPU_WORKERS = Math.max(2, availableParallelism());
/**
 * Workers of the integration tier: its files mostly wait (deadlines, servers, kubectl), so more
 * than the cores. Most operator tests step a virtual clock that waits for the operator
 * (test/operator/stepped-clock.ts), so a busy CPU slows them without changing what they see; the
 * few that still run at 60× real time (a second of CPU starvation is a virtual minute) or measure
 * real time beside a real Prometheus are why it is not more: with two more than the cores, the
 * real-Prometheus leading-signal test and the reset test of azure-deadlines missed their bounds.
 */
const INTEGRATION_WORKERS = Math.max(3, availableParallelism() + 1);

const SLOW = [
  "bench/control-loop.test.ts",
  "src/cli/commands/index.test.ts",
  "src/cli/program.test.ts",
  "src/simulate/compare.test.ts",
  "src/simulate/steady.test.ts",
  "src/autoscale/truthful.test.ts",
  "src/azure/history.test.ts",
  // Under test/ but without a cluster: the simulate CLI end to end, and backtests of emulated demand.
  "test/simulate/simulate-cli.test.ts",
  "test/simulate/backtest.test.ts",
];

/**
 * Integration files whose bounds are real time at the scale of a scheduling delay — a Prometheus
 * scraping every 20 ms, a poll cycle's sub-second margin beside a 1 s deadline — or whose
 * operator must keep pace with a virtual clock running at a multiple of real time pass by pass
 * (the soak's 300 policies each passed every poll, a hung write given up at its deadline to the
 * millisecond, the demo's flash crowd caught as it happens, a real Prometheus scraping every 250 or
 * 125 real ms, whose rates a late scrape skews):
 * they run one at a time, after the parallel ones, on a CPU no other file of the run competes for.
 */
const SERIAL = [
  "test/reliability/soak.test.ts",
  "test/operator/kube-hang.test.ts",
  "test/cluster/prometheus.test.ts",
  "test/operator/leading-faults.test.ts",
  "test/operator/leading-constant.test.ts",
  "test/operator/leading.test.ts",
  "test/demo/demo.test.ts",
  "test/demo/demo-replicas.test.ts",
];

/** The integration tiers' common settings. */
const INTEGRATION = {
  globalSetup: ["test/cluster/global-setup.ts"],
  testTimeout: 120_000,
  hookTimeout: 600_000,
};

export default defineConfig({
  test: {
    sequence: { sequencer: LongRunningFirst },
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
          exclude: [...configDefaults.exclude, ...SLOW],
          maxWorkers: CPU_WORKERS,
          // Its files share a worker's module cache (they stub no module and restore any fake
          // timers), which saves most of the import time; each file's own state is its own.
          isolate: false,
          // vitest's 5 s default is no bound of the product: property tests and backtests take a
          // few seconds on an idle core, more on a loaded one.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "slow",
          include: SLOW,
          maxWorkers: CPU_WORKERS,
          // As the integration tier, where the test/simulate files were before.
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: ["test/unit/**", "test/contract/*.test.ts", ...SLOW, ...SERIAL],
          ...INTEGRATION,
          maxWorkers: INTEGRATION_WORKERS,
          // After the CPU-bound tiers: parallel integration files must not wait on a busy CPU.
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: "serial",
          include: SERIAL,
          ...INTEGRATION,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
