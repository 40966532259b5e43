/**
 * A local Prometheus server: the real binary on 127.0.0.1, on a free port, with a temporary data
 * directory, static scrape targets and the lifecycle API on (its targets change with a reload).
 *
 * It is set up for targets on a virtual clock that expose their samples with explicit timestamps
 * far from the wall clock (e.g. 2015 at 720× real time):
 * - Prometheus writes its own series of each scrape (up, scrape_duration_seconds, …) at wall-clock
 *   time, into the same storage. With the default 2 h block range the head then spans from the
 *   virtual time to now and refuses the virtual samples as out of bounds ("too old or too far into
 *   the future"); the out-of-order window lets them in but makes the head compact every 2 h range
 *   in between, one by one (about 50,000 for 2015 → 2026, tens of ms each), with queries meanwhile
 *   wrong. A block range of 100 years (--storage.tsdb.min-block-duration) keeps both in one head:
 *   nothing is compacted, so memory and the write-ahead log grow with the samples, which is right
 *   for tests and demos, not for a long-running server.
 * - Query at the virtual time: `GET /api/v1/query?query=…&time=<virtual seconds>`. The series
 *   Prometheus writes itself (`up`, …) are at wall-clock time and not there.
 * - A range of `[w]` needs at least two samples: w ≥ 2 × interval × speed (1m at 720× needs an
 *   interval of 40 ms or less; 20 ms gives about 4 samples a virtual minute).
 * Targets are picked up within 100 ms of a start or a reload (--scrape.discovery-reload-interval,
 * Prometheus 3 and later; 2.x takes up to 5 s).
 */
import { mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, get, ManagedProcess, trackForCleanup, waitFor } from "./process.js";
import { ensurePrometheusBinary, prometheusVersionOf } from "./prometheus-binary.js";
import { type PrometheusTarget, prometheusConfig } from "./prometheus-config.js";

export interface StartPrometheusOptions {
  /** The prometheus binary; default: ensurePrometheusBinary()'s (which builds it on first use). */
  binary?: string;
  /** What to scrape; may be empty. */
  targets: readonly PrometheusTarget[];
  /** Scrape interval, ms, a positive whole number; the scrape timeout is the same or 10 s if shorter. */
  scrapeIntervalMs: number;
  /** Progress lines: which binary is used, and the build's lines when it is built. */
  onProgress?: (line: string) => void;
  /** Aborts the start (the build, the wait for readiness); a started server is stopped with stop(). */
  signal?: AbortSignal;
  /** How long to wait for readiness and for the targets to be active. Default 30 s. */
  startTimeoutMs?: number;
  /** Parent of the temporary directory; default os.tmpdir(). */
  baseDir?: string;
  /** Keep the temporary directory (config, data, log) after stop(). Default: $SIGNALR_AUTOSCALER_KEEP_PROMETHEUS_DIR is set. */
  keepDir?: boolean;
}

export interface LocalPrometheus {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** The prometheus.yml it runs with, rewritten by setTargets(). */
  readonly configFile: string;
  /** Its TSDB directory; removed by stop(). */
  readonly dataDir: string;
  /** Its stdout and stderr. */
  readonly logFile: string;
  /** The release the binary reports, e.g. "3.16.0". */
  readonly version: string;
  /**
   * Replaces the targets: rewrites the config, reloads it (POST /-/reload), and resolves once
   * the new targets are the active ones. Throws when the reload fails or Prometheus logs an error
   * meanwhile (with its reason); calls run one after the other.
   */
  setTargets(targets: readonly PrometheusTarget[]): Promise<void>;
  /** SIGTERM, SIGKILL after 5 s, then removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
}

/** Long enough to hold samples from a virtual clock and the wall clock in one head (see above). */
const BLOCK_RANGE = "100y";
const DISCOVERY_RELOAD_INTERVAL = "100ms";
const STOP_GRACE_MS = 5_000;

interface ActiveTargets {
  data?: { activeTargets?: { scrapePool?: string }[] };
}

/** True when the active targets are exactly `pools` (job_name → count). */
async function targetsActive(url: string, pools: ReadonlyMap<string, number>): Promise<boolean> {
  const res = await get(`${url}/api/v1/targets?state=active`);
  if (res.status !== 200) return false;
  const active = (JSON.parse(res.body) as ActiveTargets).data?.activeTargets ?? [];
  const counts = new Map<string, number>();
  for (const t of active) counts.set(t.scrapePool ?? "", (counts.get(t.scrapePool ?? "") ?? 0) + 1);
  return counts.size === pools.size && [...pools].every(([pool, n]) => counts.get(pool) === n);
}

/** The size of `file` in bytes, 0 when it does not exist yet. */
async function sizeOf(file: string): Promise<number> {
  return await stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/**
 * The first error Prometheus logged after byte `offset` of its log (`level=ERROR`, or `level=error`
 * in 2.x), e.g. a scrape pool it could not create for a CA file it cannot read; undefined if none.
 */
async function loggedErrorSince(logFile: string, offset: number): Promise<string | undefined> {
  const text = (await readFile(logFile).catch(() => Buffer.alloc(0))).subarray(offset).toString("utf8");
  const line = text.split("\n").find((l) => /\blevel=error\b/i.test(l));
  return line === undefined ? undefined : `it logged an error: ${line}`;
}

/** Polls until the active targets are `pools`; gives up on an error logged after `offset`. */
function targetsProbe(url: string, pools: ReadonlyMap<string, number>, logFile: string, offset: number) {
  return async (): Promise<boolean | string> =>
    (await targetsActive(url, pools)) || ((await loggedErrorSince(logFile, offset)) ?? false);
}

/** POST <url>/-/reload; throws with Prometheus's reason when it is not 200. */
async function reload(url: string): Promise<void> {
  const res = await fetch(`${url}/-/reload`, { method: "POST", signal: AbortSignal.timeout(30_000) });
  const body = await res.text();
  if (res.status !== 200)
    throw new Error(`Prometheus refused the new configuration (${res.status}): ${body.trim()}`);
}

/**
 * Starts Prometheus on a free loopback port and waits until it is ready (GET /-/ready) and
 * scrapes `targets`. Throws, with the last lines Prometheus printed, when it exits, logs an error
 * (e.g. a caFile it cannot read), or is not ready in time; a port lost to another process between
 * choosing and binding it is retried. Throws before starting anything on invalid targets or
 * interval (see prometheusConfig).
 */
export async function startPrometheus(options: StartPrometheusOptions): Promise<LocalPrometheus> {
  // Checked before anything is started.
  const first = prometheusConfig(options.targets, options.scrapeIntervalMs);
  const resolved =
    options.binary === undefined
      ? await ensurePrometheusBinary({
          ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
        })
      : { binary: options.binary, version: await prometheusVersionOf(options.binary) };
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, resolved.binary, resolved.version, first.yaml, first.pools);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (attempt >= attempts || !/address already in use/i.test(message)) throw err;
    }
  }
}

async function startOnce(
  options: StartPrometheusOptions,
  binary: string,
  version: string,
  yaml: string,
  pools: ReadonlyMap<string, number>,
): Promise<LocalPrometheus> {
  const keepDir = options.keepDir ?? (process.env["SIGNALR_AUTOSCALER_KEEP_PROMETHEUS_DIR"] ?? "") !== "";
  const dir = await mkdtemp(join(options.baseDir ?? tmpdir(), "signalr-autoscaler-prometheus-"));
  const configFile = join(dir, "prometheus.yml");
  const dataDir = join(dir, "data");
  const logFile = join(dir, "prometheus.log");
  await writeFile(configFile, yaml);

  let proc: ManagedProcess | undefined;
  const tracked = trackForCleanup(dir, keepDir, () => (proc === undefined ? [] : [proc]));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await proc?.stop(STOP_GRACE_MS);
    tracked.release();
    if (!keepDir) await rm(dir, { recursive: true, force: true });
  };

  try {
    const [port] = (await freePorts(1)) as [number];
    const url = `http://127.0.0.1:${port}`;
    const args = [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${dataDir}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-lifecycle",
      `--storage.tsdb.min-block-duration=${BLOCK_RANGE}`,
      ...(Number(version.split(".")[0]) >= 3
        ? [`--scrape.discovery-reload-interval=${DISCOVERY_RELOAD_INTERVAL}`]
        : []),
    ];
    proc = new ManagedProcess("prometheus", binary, args, logFile);
    tracked.recordPgids();
    const started = proc;
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    await waitFor(
      "Prometheus did not become ready",
      started,
      deadline,
      async () => (await get(`${url}/-/ready`)).status === 200,
      options.signal,
    );
    await waitFor(
      "Prometheus did not start scraping its targets",
      started,
      deadline,
      targetsProbe(url, pools, logFile, 0),
      options.signal,
    );

    let queue: Promise<void> = Promise.resolve();
    const setTargets = (targets: readonly PrometheusTarget[]): Promise<void> => {
      const run = async (): Promise<void> => {
        if (stopped) throw new Error("Prometheus is stopped");
        const next = prometheusConfig(targets, options.scrapeIntervalMs);
        const staged = `${configFile}.next`;
        await writeFile(staged, next.yaml);
        await rename(staged, configFile);
        const mark = await sizeOf(logFile);
        await reload(url);
        await waitFor(
          "Prometheus did not switch to the new targets",
          started,
          Date.now() + 30_000,
          targetsProbe(url, next.pools, logFile, mark),
        );
      };
      const result = queue.then(run);
      queue = result.catch(() => {});
      return result;
    };

    return { url, configFile, dataDir, logFile, version, setTargets, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
