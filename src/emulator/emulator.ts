/**
 * `startEmulator`: an HTTPS stand-in for Azure Resource Manager (SignalR, Web PubSub, autoscale
 * settings) and the Azure Monitor metrics data plane, on loopback, driven by the traffic model on a
 * virtual clock. Used by integration tests, `demo` and the `emulator` command.
 *
 * At start it makes a CA and a server certificate for the loopback names (`shared/tls.ts`, valid a
 * day) and writes the CA to `caPath` (or a new temporary directory, removed at stop): point the
 * SDKs at `armEndpoint` and `metricsEndpoint(region)` with the pipeline option
 * `tlsOptions: { ca: caPem }`.
 *
 * It also serves each SignalR instance's app servers as Prometheus would scrape them
 * (`appServerMetricsUrl(name)`, `appservers.ts`; with `appServerHttpPort`, on plain HTTP too). Their
 * samples carry the **virtual** clock's time as explicit timestamps, so a Prometheus scraping them
 * stores virtual times: query it at virtual times.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isSkuName } from "../capacity/index.js";
import { generateServerCertificate } from "../shared/tls.js";
import type { DemandSpec, DisconnectionModel, TrafficMinute } from "../traffic/index.js";
import { normalizeLocation, parseArmId } from "./arm-id.js";
import { createVirtualClock, type VirtualClock } from "./clock.js";
import type { EmulatorControl, EmulatorSnapshot } from "./control.js";
import { viewJson } from "./control.js";
import { FaultTable } from "./faults.js";
import { type MetricsRateLimit, MetricsThrottle, RateLimiter } from "./ratelimit.js";
import { RequestLog } from "./request-log.js";
import {
  type AppServerHttpServer,
  createAppServerHttpServer,
  createEmulatorServer,
  type EmulatorServer,
} from "./server.js";
import { EmulatorState, type InstanceSpec, StateError } from "./state.js";
import type { TrafficRecorder } from "./traffic.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);
const MINUTE = 60_000;

export interface EmulatorOptions {
  /** Loopback address to listen on: `127.0.0.1` (default), `::1` or `localhost`. */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** Where to write the CA certificate (default: a new temporary directory, removed at stop). */
  caPath?: string;
  /** The virtual clock (default: one created from `start` and `speed`). */
  clock?: VirtualClock;
  /** Virtual start time (default: now). */
  start?: Date;
  /** Virtual ms per real ms (default 1). */
  speed?: number;
  /** Virtual time a scale or create takes, ms (default 3 minutes). */
  scaleDurationMs?: number;
  /** Virtual time before a minute's metrics are fully ingested, ms (default 3 minutes). */
  ingestionDelayMs?: number;
  /**
   * Virtual time after an accepted update during which ARM reads still show the instance as
   * before it (old SKU and units, its provisioning state then), ms (default 0).
   */
  readAfterWriteLagMs?: number;
  /**
   * Unit quota of every subscription and region, per service (default: none, unlimited). Azure
   * SignalR Service's default is 150 ("Azure SignalR Service limits"); `POST /_emulator/quotas`
   * sets more specific ones.
   */
  unitQuota?: number;
  /** Relative noise on server load (default 0.05). */
  noiseAmplitude?: number;
  /** Noise seed (default `emulator`). */
  seed?: string;
  /** Apply ARM's per-subscription read/write token buckets (default true). */
  armRateLimit?: boolean;
  /**
   * Throttle `metrics:getBatch` with a token bucket per subscription of these figures (429, or
   * `status` 529, with `Retry-After`); default off. Switch it at run time with the control API
   * (`POST /_emulator/ratelimit`). See `ratelimit.ts` for why no figures are Azure's.
   */
  metricsRateLimit?: MetricsRateLimit;
  /** Items per page of ARM lists (default 100). */
  armPageSize?: number;
  /** Demand of instances added without one (default: daily pattern, peak 10,000 connections). */
  defaultDemand?: DemandSpec;
  /** Days of past metrics an instance added without `createdAt` has (default 28). */
  historyDays?: number;
  /**
   * Mean client connection lifetime, seconds, from which the app servers' negotiate rate follows
   * (default 1,200: `traffic/arrivals.ts`).
   */
  connectionLifetimeSeconds?: number;
  /** Which clients a completed update disconnects (default `RemovedUnits`; `traffic/disconnections.ts`). */
  disconnection?: DisconnectionModel;
  /**
   * Also serve the app servers' `/metrics` on plain HTTP on this loopback port (0: any free port),
   * for a Prometheus without the emulator's CA. Default: HTTPS only.
   */
  appServerHttpPort?: number;
  /** Instances to create at start. */
  instances?: InstanceSpec[];
  /** Called for each Azure request served (not control requests). */
  onRequest?: Parameters<typeof createEmulatorServer>[0]["onRequest"];
  /** Told each answered Azure request with its answer, as sent (`traffic.ts`). */
  recordTraffic?: TrafficRecorder;
}

export interface RunningEmulator {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** ARM endpoint: pass as `endpoint` / `$host` of the ARM clients. */
  armEndpoint: string;
  /** Metrics endpoint of a region: `<url>/metrics/<region>`. */
  metricsEndpoint: (region: string) => string;
  /** The same as a template: `<url>/metrics/{region}`. */
  metricsEndpointTemplate: string;
  /** Control API base: `<url>/_emulator`. */
  controlEndpoint: string;
  /** The app servers' metrics of a SignalR instance, by name: `<url>/appservers/<name>/metrics`. */
  appServerMetricsUrl: (instanceName: string) => string;
  /** `http://127.0.0.1:<port>`, the plain-HTTP app-server port, when `appServerHttpPort` was given. */
  appServerHttpUrl?: string;
  /** Path of the CA certificate file. */
  caPath: string;
  /** The CA certificate, PEM. */
  caPem: string;
  clock: VirtualClock;
  state: EmulatorState;
  control: EmulatorControl;
  /** Stops the server and removes the temporary CA directory, if one was made. */
  stop(): Promise<void>;
}

/** The emulator's state on `clock`: timing, noise and demand from `options`, quota and instances added. */
function createState(options: EmulatorOptions, clock: VirtualClock): EmulatorState {
  const state = new EmulatorState({
    clock,
    ...(options.scaleDurationMs !== undefined ? { scaleDurationMs: options.scaleDurationMs } : {}),
    ...(options.ingestionDelayMs !== undefined ? { ingestionDelayMs: options.ingestionDelayMs } : {}),
    ...(options.readAfterWriteLagMs !== undefined
      ? { readAfterWriteLagMs: options.readAfterWriteLagMs }
      : {}),
    ...(options.noiseAmplitude !== undefined ? { noiseAmplitude: options.noiseAmplitude } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.defaultDemand ? { defaultDemand: options.defaultDemand } : {}),
    ...(options.historyDays !== undefined ? { historyDays: options.historyDays } : {}),
    ...(options.connectionLifetimeSeconds !== undefined
      ? { connectionLifetimeSeconds: options.connectionLifetimeSeconds }
      : {}),
    ...(options.disconnection !== undefined ? { disconnection: options.disconnection } : {}),
  });
  if (options.unitQuota !== undefined) state.refusals.setQuota({ units: options.unitQuota });
  for (const spec of options.instances ?? []) state.addInstance(spec);
  return state;
}

/**
 * Writes the CA (PEM) to `caPath`, making its directory, or to `ca.pem` in a new temporary
 * directory (`tempDir`, for the caller to remove) when none is given.
 */
async function writeCa(
  caPem: string,
  caPath: string | undefined,
): Promise<{ caPath: string; tempDir?: string }> {
  if (caPath === undefined) {
    const tempDir = await mkdtemp(join(tmpdir(), "signalr-autoscaler-emulator-"));
    const path = join(tempDir, "ca.pem");
    await writeFile(path, caPem, { mode: 0o644 });
    return { caPath: path, tempDir };
  }
  await mkdir(dirname(caPath), { recursive: true });
  await writeFile(caPath, caPem, { mode: 0o644 });
  return { caPath };
}

/** The servers once listening: the HTTPS port, and the plain-HTTP app-server server and its port. */
interface Listening {
  port: number;
  appServerHttp?: AppServerHttpServer;
  appServerHttpPort?: number;
}

/**
 * Starts the HTTPS server on `host:options.port` and, with `appServerHttpPort`, the plain-HTTP
 * app-server server; on failure closes the HTTPS server and removes `tempDir`, then throws.
 */
async function listenAll(
  server: EmulatorServer,
  state: EmulatorState,
  host: string,
  options: EmulatorOptions,
  tempDir: string | undefined,
): Promise<Listening> {
  try {
    const port = await server.listen(host, options.port ?? 0);
    if (options.appServerHttpPort === undefined) return { port };
    const appServerHttp = createAppServerHttpServer(state);
    const appServerHttpPort = await appServerHttp.listen(host, options.appServerHttpPort);
    return { port, appServerHttp, appServerHttpPort };
  } catch (err) {
    await server.close();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts the emulator.
 * @throws RangeError for a host that is not loopback or an invalid `metricsRateLimit`; the errors of `addInstance` for bad
 *   `instances`; I/O errors writing the CA.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host))
    throw new RangeError(`the emulator listens on loopback only (127.0.0.1, ::1, localhost), not "${host}"`);
  const clock =
    options.clock ??
    createVirtualClock({
      ...(options.start ? { start: options.start } : {}),
      ...(options.speed !== undefined ? { speed: options.speed } : {}),
    });
  const state = createState(options, clock);
  const faults = new FaultTable();
  const log = new RequestLog();
  const limiter = options.armRateLimit === false ? undefined : new RateLimiter();
  const metricsThrottle = new MetricsThrottle(options.metricsRateLimit);
  const control = createControl(state, faults, log, limiter, metricsThrottle);

  const tls = await generateServerCertificate({
    caName: "signalr-autoscaler emulator CA",
    serverName: "localhost",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1", "::1"],
  });
  const { caPath, tempDir } = await writeCa(tls.caPem, options.caPath);

  const server = createEmulatorServer({
    state,
    faults,
    control,
    log,
    tls,
    ...(limiter ? { limiter } : {}),
    metricsThrottle,
    ...(options.armPageSize ? { armPageSize: options.armPageSize } : {}),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    ...(options.recordTraffic ? { recordTraffic: options.recordTraffic } : {}),
  });
  const { port, appServerHttp, appServerHttpPort } = await listenAll(server, state, host, options, tempDir);
  const hostPart = host === "::1" ? "[::1]" : host;
  const url = `https://${hostPart}:${port}`;
  let stopped = false;
  return {
    url,
    armEndpoint: url,
    metricsEndpoint: (region) => `${url}/metrics/${normalizeLocation(region)}`,
    metricsEndpointTemplate: `${url}/metrics/{region}`,
    controlEndpoint: `${url}/_emulator`,
    appServerMetricsUrl: (instanceName) => `${url}/appservers/${encodeURIComponent(instanceName)}/metrics`,
    ...(appServerHttpPort !== undefined
      ? { appServerHttpUrl: `http://${hostPart}:${appServerHttpPort}` }
      : {}),
    caPath,
    caPem: tls.caPem,
    clock,
    state,
    control,
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([server.close(), appServerHttp?.close()]);
      if (tempDir) await rm(tempDir, { recursive: true, force: true });
    },
  };
}

function createControl(
  state: EmulatorState,
  faults: FaultTable,
  log: RequestLog,
  limiter: RateLimiter | undefined,
  metricsThrottle: MetricsThrottle,
): EmulatorControl {
  const traffic = (resourceId: string, at?: Date): TrafficMinute | undefined => {
    const t = at?.getTime() ?? state.clock.nowMs() - MINUTE;
    return state.bucket(resourceId, Math.floor(t / MINUTE) * MINUTE)?.traffic;
  };
  const control: EmulatorControl = {
    addInstance: (spec) => state.addInstance(spec),
    updateInstance: (resourceId, patch) => {
      const { sku, ...rest } = patch;
      if (sku !== undefined && !isSkuName(sku))
        throw new StateError(400, "InvalidSku", `unknown SKU "${sku}"`);
      return state.patchInstance(parseArmId(resourceId).id, {
        ...rest,
        ...(sku !== undefined ? { sku } : {}),
      });
    },
    setDemand: (resourceId, demand) => state.setDemand(resourceId, demand),
    removeInstance: (resourceId) => state.removeInstance(resourceId),
    instance: (resourceId) => state.getInstance(resourceId),
    instances: () => state.listInstances(),
    traffic,
    addFault: (spec) => faults.add(spec),
    removeFault: (id) => faults.remove(id),
    clearFaults: () => faults.clear(),
    faults: () => faults.list(),
    now: () => state.clock.now(),
    setClock: (change) => {
      if (change.time) state.clock.set(change.time);
      if (change.speed !== undefined) state.clock.setSpeed(change.speed);
      limiter?.reset();
      metricsThrottle.reset();
    },
    advance: (ms) => state.clock.advance(ms),
    setTiming: (timing) => {
      for (const [k, v] of Object.entries(timing)) {
        if (v !== undefined && (!Number.isFinite(v) || v < 0))
          throw new RangeError(`${k} must be ≥ 0, got ${v}`);
      }
      if (timing.scaleDurationMs !== undefined) state.scaleDurationMs = timing.scaleDurationMs;
      if (timing.ingestionDelayMs !== undefined) state.ingestionDelayMs = timing.ingestionDelayMs;
      if (timing.readAfterWriteLagMs !== undefined) state.readAfterWriteLagMs = timing.readAfterWriteLagMs;
    },
    metricsRateLimit: () => metricsThrottle.spec,
    setMetricsRateLimit: (limit) => metricsThrottle.set(limit),
    setQuota: (spec) => state.refusals.setQuota(spec),
    removeQuota: (key) => state.refusals.removeQuota(key),
    clearQuotas: () => state.refusals.clearQuotas(),
    quotas: () => state.refusals.quotas(),
    addLock: (spec) => state.refusals.addLock(spec),
    removeLocks: (scope, name) => state.refusals.removeLocks(scope, name),
    locks: () => state.refusals.locks(),
    setPolicy: (spec) => state.refusals.setPolicy(spec),
    removePolicy: (name) => state.refusals.removePolicy(name),
    policies: () => state.refusals.policies(),
    addAutoscaleSetting: (spec) => state.addAutoscaleSetting(spec),
    clearAutoscaleSettings: () => state.clearAutoscaleSettings(),
    requests: () => log.records(),
    calls: () => log.counters(),
    resetRequests: () => log.clear(),
    appServers: (instanceName) => state.appServers(instanceName),
    disconnections: (resourceId) => state.disconnections(resourceId),
    replicas: (resourceId) => state.replicasOf(resourceId),
    failover: (resourceId, options = {}) => state.failover(resourceId, options.cause),
    restore: (resourceId) => state.restore(resourceId),
    failovers: (resourceId) => state.failovers(resourceId),
    restartAppServers: (instanceName) => state.restartAppServers(instanceName),
    snapshot: (): EmulatorSnapshot => ({
      now: state.clock.now().toISOString(),
      speed: state.clock.speed,
      scaleDurationSeconds: state.scaleDurationMs / 1000,
      ingestionDelaySeconds: state.ingestionDelayMs / 1000,
      readAfterWriteLagSeconds: state.readAfterWriteLagMs / 1000,
      quotas: state.refusals.quotas(),
      locks: state.refusals.locks(),
      policies: state.refusals.policies(),
      instances: state.listInstances().map((v) => {
        const t = traffic(v.resourceId);
        return {
          ...(viewJson(v) as Omit<EmulatorSnapshot["instances"][number], "traffic">),
          ...(t ? { traffic: t } : {}),
        };
      }),
      faults: faults.list(),
      autoscaleSettings: state.listAutoscaleSettings(),
      calls: log.counters(),
      metricsRateLimit: metricsThrottle.spec ?? null,
    }),
  };
  return control;
}
