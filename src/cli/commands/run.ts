/**
 * `signalr-autoscaler run`: the operator. Settings come from flags, each with an environment
 * variable as its default (the Deployment in `deploy/` sets them). Stops cleanly on SIGTERM/SIGINT:
 * the current passes finish (or are abandoned after the grace period), the lease is released, the
 * process exits 0.
 */

import { existsSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join, resolve } from "node:path";
import { Option } from "commander";
import { createAzureAdapters } from "../../azure/index.js";
import { realClock } from "../../controller/clock.js";
import { DEFAULT_POLL_CYCLE_TIMEOUT_MS, DEFAULT_READINESS_MARGIN_MS } from "../../controller/cycle-watch.js";
import { startProbeServer } from "../../controller/http.js";
import { createLogger, LOG_LEVELS, type LogLevel, prettyDestination } from "../../controller/logging.js";
import { OperatorMetrics } from "../../controller/metrics.js";
import { Operator } from "../../controller/operator.js";
import { DEFAULT_STATUS_REFRESH_MS } from "../../controller/status-need.js";
import { parseTenancy, type TenancyMap } from "../../controller/tenancy.js";
import {
  createKubeClients,
  DEFAULT_KUBE_REQUEST_TIMEOUT_MS,
  type KubeConfigSource,
  loadKubeConfig,
} from "../../kube/client.js";
import { DISCONNECTION_MODELS, type DisconnectionModel } from "../../traffic/disconnections.js";
import {
  type AzureFlags,
  type AzureTimeoutFlags,
  azureConnection,
  azureOptions,
  azureTimeoutOptions,
  azureTimeouts,
  logCredential,
} from "../azure-flags.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { positiveSeconds, readFlagText, secondsOf as seconds } from "../flags.js";
import type { CliIo } from "../io.js";

interface RunFlags extends CommonOptions, AzureFlags, AzureTimeoutFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string[];
  tenancyFile?: string;
  httpAddress: string;
  leaderElect: boolean;
  leaseName: string;
  leaseNamespace?: string;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  identity?: string;
  workers: string;
  kubeRequestTimeout: string;
  pollCycleTimeout: string;
  readinessMargin: string;
  statusRefreshInterval: string;
  disconnection: DisconnectionModel;
  logLevel: LogLevel;
  logFormat: "json" | "pretty";
}

/** The loop's and the lease's settings from the flags (seconds and ms as named). */
interface LoopSettings {
  workers: number;
  statusRefreshSeconds: number;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  timeouts: ReturnType<typeof azureTimeouts>;
  kubeRequestTimeoutMs: number;
  pollCycleTimeoutMs: number;
  readinessMarginMs: number;
  /** Where the lease lives: `--lease-namespace`, else `$POD_NAMESPACE`. */
  leaseNamespace: string | undefined;
}

/** Reads and checks the loop's settings, in the order their errors are reported. @throws UsageError */
function loopSettings(flags: RunFlags, io: CliIo): LoopSettings {
  const workers = Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 1)
    throw new UsageError(`--workers must be a whole number ≥ 1, got "${flags.workers}"`);
  const statusRefreshSeconds = positiveSeconds(flags.statusRefreshInterval, "--status-refresh-interval");
  const leaseDurationSeconds = positiveSeconds(flags.leaseDuration, "--lease-duration");
  const renewDeadlineSeconds = positiveSeconds(flags.renewDeadline, "--renew-deadline");
  const retryPeriodSeconds = positiveSeconds(flags.retryPeriod, "--retry-period");
  if (renewDeadlineSeconds >= leaseDurationSeconds)
    throw new UsageError("--renew-deadline must be shorter than --lease-duration");
  if (retryPeriodSeconds * 1.2 >= renewDeadlineSeconds)
    throw new UsageError("--retry-period (plus 20 % jitter) must be shorter than --renew-deadline");
  const timeouts = azureTimeouts(flags);
  const kubeRequestTimeoutMs = positiveSeconds(flags.kubeRequestTimeout, "--kube-request-timeout") * 1000;
  const pollCycleTimeoutMs = positiveSeconds(flags.pollCycleTimeout, "--poll-cycle-timeout") * 1000;
  const readinessMarginMs = positiveSeconds(flags.readinessMargin, "--readiness-margin") * 1000;
  const leaseNamespace = flags.leaseNamespace ?? io.env["POD_NAMESPACE"];
  if (flags.leaderElect && !leaseNamespace) {
    throw new UsageError("--leader-elect needs --lease-namespace (or POD_NAMESPACE)");
  }
  return {
    workers,
    statusRefreshSeconds,
    leaseDurationSeconds,
    renewDeadlineSeconds,
    retryPeriodSeconds,
    timeouts,
    kubeRequestTimeoutMs,
    pollCycleTimeoutMs,
    readinessMarginMs,
    leaseNamespace,
  };
}

/** `--tenancy-file`, parsed, if given. @throws UsageError when it cannot be read or is invalid */
async function readTenancy(flags: RunFlags, io: CliIo): Promise<TenancyMap | undefined> {
  if (!flags.tenancyFile) return undefined;
  try {
    return parseTenancy(await readFlagText(flags.tenancyFile, "--tenancy-file", io.cwd), flags.tenancyFile);
  } catch (err) {
    throw err instanceof UsageError ? err : new UsageError((err as Error).message);
  }
}

/**
 * The kubeconfig to use: `--kubeconfig`, else in-cluster in a pod, else the default one
 * (`$KUBECONFIG` or `~/.kube/config`). @throws UsageError when there is none or it cannot be loaded
 */
function kubeConfigOf(flags: RunFlags, io: CliIo): ReturnType<typeof loadKubeConfig> {
  const kubeconfig = flags.kubeconfig;
  const context = flags.context ? { context: flags.context } : {};
  const source: KubeConfigSource = kubeconfig
    ? { kind: "file", path: resolve(io.cwd, kubeconfig), ...context }
    : io.env["KUBERNETES_SERVICE_HOST"]
      ? { kind: "inCluster" }
      : { kind: "default", ...context };
  if (source.kind === "default" && !io.env["KUBECONFIG"] && !existsSync(join(homedir(), ".kube", "config"))) {
    throw new UsageError(
      "no cluster to talk to: not in a pod, $KUBECONFIG is not set and ~/.kube/config does not exist (give --kubeconfig)",
    );
  }
  try {
    return loadKubeConfig(source);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot use the kubeconfig${kubeconfig ? ` ${kubeconfig}` : ""}: ${code ?? (err as Error).message}`,
    );
  }
}

/** The operator's settings: namespaces watched (none: all), tenancy, workers, deadlines, leader election. */
function operatorSettings(
  s: LoopSettings,
  flags: RunFlags,
  namespaces: string[],
  tenancy: TenancyMap | undefined,
  identity: string,
): ConstructorParameters<typeof Operator>[1] {
  const { leaseNamespace } = s;
  return {
    ...(namespaces.length > 0 ? { namespaces } : {}),
    ...(tenancy ? { tenancy } : {}),
    workers: s.workers,
    identity,
    pollCycleTimeoutMs: s.pollCycleTimeoutMs,
    readinessMarginMs: s.readinessMarginMs,
    statusRefreshMs: s.statusRefreshSeconds * 1000,
    disconnection: flags.disconnection,
    ...(flags.leaderElect && leaseNamespace
      ? {
          leaderElection: {
            leaseName: flags.leaseName,
            leaseNamespace,
            identity,
            leaseDurationSeconds: s.leaseDurationSeconds,
            renewDeadlineSeconds: s.renewDeadlineSeconds,
            retryPeriodSeconds: s.retryPeriodSeconds,
          },
        }
      : {}),
  };
}

/** Resolves once `signal` aborts (at once when it already has). */
function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((res) => {
    if (signal.aborted) res();
    signal.addEventListener("abort", () => res(), { once: true });
  });
}

async function runOperator(flags: RunFlags, io: CliIo): Promise<void> {
  const settings = loopSettings(flags, io);
  const log = createLogger({
    level: flags.logLevel,
    ...(flags.logFormat === "pretty" ? { destination: await prettyDestination() } : {}),
  });
  const tenancy = await readTenancy(flags, io);
  const namespaces = (flags.namespace ?? [])
    .flatMap((n) => n.split(","))
    .map((n) => n.trim())
    .filter(Boolean);
  const kube = createKubeClients(kubeConfigOf(flags, io), {
    requestTimeoutMs: settings.kubeRequestTimeoutMs,
  });

  const { connection, credential } = await azureConnection(flags, io.env, io.cwd);
  logCredential(log, credential);
  const azure = createAzureAdapters({ ...connection, ...settings.timeouts });
  const metrics = new OperatorMetrics();
  const identity = flags.identity ?? io.env["POD_NAME"] ?? hostname();
  const operator = new Operator(
    { kube, azure, log, metrics, clock: realClock },
    operatorSettings(settings, flags, namespaces, tenancy, identity),
  );
  const probes = await startProbeServer({
    address: flags.httpAddress,
    metrics: () => metrics.expose(),
    readiness: operator.readiness(),
  });
  log.info(
    {
      namespaces: namespaces.length > 0 ? namespaces : "all",
      http: probes.url,
      leaderElection: flags.leaderElect,
      identity,
    },
    "starting",
  );
  const stopped = whenAborted(io.signal);
  await Promise.race([operator.start(), stopped]);
  await stopped;
  log.info("stopping");
  await operator.stop();
  await probes.close();
  log.info("stopped");
  log.flush();
}

/** The `run` subcommand. */
export const runCommand: CliCommand = defineCommand<RunFlags>({
  name: "run",
  description:
    "Run the operator: watch CapacityPolicies, poll Azure Monitor, scale instances and app servers.",
  flags: (cmd, { env }) => {
    azureOptions(cmd, env)
      .option(
        "--kubeconfig <file>",
        "kubeconfig (default: in-cluster, else $KUBECONFIG or ~/.kube/config)",
        env["KUBECONFIG_FILE"],
      )
      .option("--context <name>", "kubeconfig context")
      .option(
        "--namespace <ns...>",
        "namespaces to watch (repeat or comma-separate; default $WATCH_NAMESPACES, else all)",
        env["WATCH_NAMESPACES"] ? [env["WATCH_NAMESPACES"]] : undefined,
      )
      .option("--tenancy-file <file>", "YAML map of namespace → allowed Azure scopes", env["TENANCY_FILE"])
      .option(
        "--http-address <host:port>",
        "serves /metrics, /healthz, /readyz",
        env["HTTP_ADDRESS"] ?? ":8080",
      )
      .option(
        "--leader-elect",
        "elect a leader on a Lease (for several replicas)",
        env["LEADER_ELECT"] === "true",
      )
      .option("--lease-name <name>", "leader election Lease", env["LEASE_NAME"] ?? "signalr-autoscaler")
      .option("--lease-namespace <ns>", "namespace of the Lease (default $POD_NAMESPACE)")
      .option(
        "--lease-duration <seconds>",
        "how long a follower waits before taking over a lease that is not renewed",
        env["LEASE_DURATION"] ?? "15",
      )
      .option(
        "--renew-deadline <seconds>",
        "how long the leader keeps acting without a renewal; it stops every write after it",
        env["RENEW_DEADLINE"] ?? "10",
      )
      .option("--retry-period <seconds>", "time between election attempts", env["RETRY_PERIOD"] ?? "2")
      .option("--identity <name>", "this replica's identity (default $POD_NAME or the host name)")
      .option("--workers <n>", "concurrent reconcile passes", env["WORKERS"] ?? "16");
    return azureTimeoutOptions(cmd, env)
      .option(
        "--kube-request-timeout <seconds>",
        "deadline of one Kubernetes API call (not of watches)",
        env["KUBE_REQUEST_TIMEOUT"] ?? seconds(DEFAULT_KUBE_REQUEST_TIMEOUT_MS),
      )
      .option(
        "--poll-cycle-timeout <seconds>",
        "deadline of one poll cycle's Azure read",
        env["POLL_CYCLE_TIMEOUT"] ?? seconds(DEFAULT_POLL_CYCLE_TIMEOUT_MS),
      )
      .option(
        "--readiness-margin <seconds>",
        "/readyz fails while a poll cycle runs this long past its deadline",
        env["READINESS_MARGIN"] ?? seconds(DEFAULT_READINESS_MARGIN_MS),
      )
      .option(
        "--status-refresh-interval <seconds>",
        "a policy's status is written when a field people or the next pass rely on changes, else at most this often (the age bound of its last sample in kubectl get)",
        env["STATUS_REFRESH_INTERVAL"] ?? seconds(DEFAULT_STATUS_REFRESH_MS),
      )
      .addOption(
        new Option(
          "--disconnection <model>",
          "which clients a unit change disconnects on the instances: RemovedUnits (the removed units' share, at a scale-in) or Everyone (every client, at any change); the leading signal discounts their reconnects",
        )
          .choices([...DISCONNECTION_MODELS])
          .default(env["DISCONNECTION"] ?? "RemovedUnits"),
      )
      .addOption(
        new Option("--log-level <level>", "log level")
          .choices([...LOG_LEVELS])
          .default(env["LOG_LEVEL"] ?? "info"),
      )
      .addOption(
        new Option("--log-format <format>", "json, or pretty for people")
          .choices(["json", "pretty"])
          .default(env["LOG_FORMAT"] ?? "json"),
      );
  },
  action: runOperator,
});
