/**
 * The demo's Prometheus: a real one (`localcluster/prometheus.ts`, built from its Go module on
 * first use and cached), scraping the emulator's app servers so that a policy with a leading
 * signal (`spec.anticipation.leadingSignal`) reads the negotiate rate as it would in a cluster.
 *
 * - Target: the instance's app-server `/metrics` on the emulator's plain-HTTP app-server port,
 *   `job` = the policy's app-server Deployment name (`app` when it has none). Its samples carry
 *   the emulator's virtual timestamps, so Prometheus stores virtual time and the operator queries
 *   it at its (virtual) now.
 * - Scrape interval: 15 virtual seconds, the usual setting, in real time `15 s ÷ speed` — at
 *   least {@link MIN_SCRAPE_INTERVAL_MS} (at 720× that is 14.4 virtual seconds).
 * - The policy's `serverAddress` is replaced by this Prometheus's URL. Without Prometheus
 *   (`--no-prometheus`) the leading signal is removed from the policy: the demo then runs on Azure
 *   Monitor alone, as before.
 */
import type { CapacityPolicy, PrometheusSourceSpec } from "../api/index.js";
import type { RunningEmulator } from "../emulator/emulator.js";
import { type LocalPrometheus, startPrometheus } from "../localcluster/index.js";

/** Virtual seconds between two scrapes. */
export const SCRAPE_VIRTUAL_SECONDS = 15;
/** The shortest real scrape interval, ms. */
export const MIN_SCRAPE_INTERVAL_MS = 20;

/** The real scrape interval for `speed` virtual ms per real ms, ms. */
export function scrapeIntervalMs(speed: number): number {
  return Math.max(MIN_SCRAPE_INTERVAL_MS, Math.round((SCRAPE_VIRTUAL_SECONDS * 1000) / speed));
}

/** The policy without its leading signal. */
export function withoutLeadingSignal(policy: CapacityPolicy): CapacityPolicy {
  const anticipation = policy.spec.anticipation;
  if (!anticipation?.leadingSignal) return policy;
  const { leadingSignal: _, ...rest } = anticipation;
  return { ...policy, spec: { ...policy.spec, anticipation: rest } };
}

/** The policy with its leading signal pointed at `url`. */
export function pointedAt(policy: CapacityPolicy, url: string): CapacityPolicy {
  return withLeadingPrometheus(policy, (p) => ({ ...p, serverAddress: url }));
}

/** The policy with its leading signal's Prometheus source changed by `change` (none: as it is). */
export function withLeadingPrometheus(
  policy: CapacityPolicy,
  change: (prometheus: PrometheusSourceSpec) => PrometheusSourceSpec,
): CapacityPolicy {
  const anticipation = policy.spec.anticipation;
  const leading = anticipation?.leadingSignal;
  if (!anticipation || !leading) return policy;
  return {
    ...policy,
    spec: {
      ...policy.spec,
      anticipation: {
        ...anticipation,
        leadingSignal: { ...leading, prometheus: change(leading.prometheus) },
      },
    },
  };
}

/** The job name the demo's Prometheus gives the app servers' series. */
export function appServerJob(policy: CapacityPolicy): string {
  return policy.spec.appServer?.deploymentName ?? "app";
}

/**
 * Starts Prometheus scraping the instance's app servers (the emulator must have its plain-HTTP
 * app-server port). @throws Error when the binary cannot be built or Prometheus does not start.
 */
export async function startDemoPrometheus(options: {
  policy: CapacityPolicy;
  emulator: RunningEmulator;
  speed: number;
  onProgress: (line: string) => void;
  signal: AbortSignal;
  /**
   * The app servers to scrape, each under its job: default the policy's instance's, under
   * {@link appServerJob}. A replica group's members each have their own (`appServerName`: the
   * instance's or the replica's name).
   */
  targets?: readonly { job: string; appServerName: string }[];
}): Promise<{ prometheus: LocalPrometheus; scrapeIntervalMs: number }> {
  const base = options.emulator.appServerHttpUrl;
  if (base === undefined) throw new Error("the emulator serves no plain-HTTP app-server port");
  const name = options.policy.spec.target.resourceId.split("/").pop() ?? "";
  const interval = scrapeIntervalMs(options.speed);
  const targets = options.targets ?? [{ job: appServerJob(options.policy), appServerName: name }];
  const prometheus = await startPrometheus({
    targets: targets.map((t) => ({
      job: t.job,
      url: `${base}/appservers/${encodeURIComponent(t.appServerName)}/metrics`,
    })),
    scrapeIntervalMs: interval,
    onProgress: options.onProgress,
    signal: options.signal,
  });
  return { prometheus, scrapeIntervalMs: interval };
}
