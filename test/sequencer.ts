/**
 * vitest's order of test files, with the long-running ones first.
 *
 * vitest runs the files of every project in one pool of workers, each project's files by their
 * duration in its cache (longest first) and files it has not timed by size (largest first). On a
 * checkout without that cache the soak — a short file that runs for minutes — would start late and
 * so decide the run's wall time alone; the files named here start first whatever the cache says.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files (from the project root) that start before all others of their tier, in this order: the
 * soak (serial), then the integration files of 20 s or more on an idle machine, longest first, so
 * that none of them starts last and runs on alone while the other workers wait.
 */
export const LONG_RUNNING = [
  "test/reliability/soak.test.ts",
  "test/operator/update-recovery.test.ts",
  "test/production/ha.test.ts",
  "test/kube/watch.test.ts",
  "test/production/package.test.ts",
  "test/operator/replay-parity.test.ts",
  "test/operator/watch-restart.test.ts",
  "test/reliability/faults.test.ts",
  "test/operator/token-faults.test.ts",
];

function rank(spec: TestSpecification): number {
  const i = LONG_RUNNING.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
  return i === -1 ? LONG_RUNNING.length : i;
}

export class LongRunningFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: the others keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
