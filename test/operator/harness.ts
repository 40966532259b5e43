/**
 * An operator under test: the real Operator in this process, against the shared local control
 * plane and an in-process HTTPS emulator on a virtual clock running `speed` times faster than real
 * time (the operator's clock follows it).
 */
import { pino } from "pino";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type AzureConnection, createAzureAdapters } from "../../src/azure/index.js";
import { scaledClock } from "../../src/controller/clock.js";
import { OperatorMetrics } from "../../src/controller/metrics.js";
import { Operator, type OperatorSettings, type PassReport } from "../../src/controller/operator.js";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { staticCredential } from "../azure/helpers.js";
import { adminClients, createDeployment, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { requestCollector } from "./helpers.js";
import { SteppedClock } from "./stepped-clock.js";

export const SUB = "00000000-0000-0000-0000-000000000000";

/** Real time a stepped {@link Harness.eventually} waits at least before it gives up (ms). */
const REAL_FLOOR_MS = 5_000;
/** Real ms between the checks of a stepped {@link Harness.eventually} once its virtual budget is spent. */
const SPENT_RECHECK_MS = 50;
/**
 * The most virtual ms a stepped {@link Harness.eventually} lets pass per real ms while the
 * operator is idle: ten times the 60× the tests were written for. What the test changes reaches
 * the operator through its watches in real time (tens of ms on a loaded machine); unpaced, the
 * clock would run minutes ahead of a policy the test has just created before the operator saw it.
 */
const MAX_STEPPED_SPEED = 600;

export function signalrId(name: string, rg = "rg-chat", sub = SUB): string {
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.SignalRService/SignalR/${name}`;
}

export interface Harness {
  emulator: RunningEmulator;
  operator: Operator;
  metrics: OperatorMetrics;
  reports: PassReport[];
  /** The test-driven clock when the harness is `stepped`. */
  stepped: SteppedClock | undefined;
  /**
   * `eventually` of test/kube/support.ts on the operator's time. Stepped: each failed check moves
   * the virtual clock by `intervalMs` × `speed` (`speed`: the emulator's, 60 unless the options
   * set it), until the check passes or `timeoutMs` × `speed` virtual ms have passed — and at least
   * min(`timeoutMs`, 5 s) of real time, as what a test waits for may come from outside the
   * operator (a watch event, kubectl); while the operator is idle the clock runs at most 600× real
   * time, and once the virtual budget is spent it re-checks every 50 real ms with the clock still. Not stepped: real waits. On a stepped harness wait only through this
   * and {@link Harness.sleep}: the real-time `eventually` (and helpers built on it, such as
   * `readyOnP1x10`) never moves the clock, so the operator never runs.
   */
  eventually<T>(check: () => Promise<T> | T, timeoutMs?: number, intervalMs?: number): Promise<T>;
  /** Lets `ms` real ms (× `speed` virtual ones) pass: stepped, at once. */
  sleep(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts an emulator (speed 60 by default: a minute per real second) and an operator against
 * `kube`; `azure` overrides the connection (a real credential, timeouts).
 */
export async function startHarness(
  kube: KubeClients,
  options: {
    emulator?: EmulatorOptions;
    operator?: OperatorSettings;
    emulatorInstance?: RunningEmulator;
    azure?: Partial<AzureConnection>;
    /**
     * Step the operator on a virtual clock the test moves ({@link SteppedClock}) instead of
     * running it at the emulator's speed; `speed` (default 60) still converts the real budgets of
     * {@link Harness.eventually} and {@link Harness.sleep} to virtual time.
     */
    stepped?: boolean;
  } = {},
): Promise<Harness> {
  const emulator =
    options.emulatorInstance ??
    (await startEmulator({
      speed: 60,
      scaleDurationMs: 120_000,
      ingestionDelayMs: 120_000,
      noiseAmplitude: 0,
      armRateLimit: false,
      ...options.emulator,
    }));
  const speed = options.emulator?.speed ?? 60;
  const stepped = options.stepped ? new SteppedClock(emulator.clock) : undefined;
  const clock = stepped ? stepped.operatorClock : scaledClock(emulator.clock);
  const azure = createAzureAdapters({
    credential: staticCredential(),
    armEndpoint: emulator.armEndpoint,
    metricsEndpoint: emulator.metricsEndpoint,
    ca: emulator.caPem,
    now: () => new Date(clock.now()),
    ...options.azure,
  });
  const metrics = new OperatorMetrics({ now: clock.now, processMetrics: false });
  const operator = new Operator(
    { kube, azure, log: pino({ level: process.env["TEST_LOG_LEVEL"] ?? "silent" }), metrics, clock },
    { tickMs: 1000, ...options.operator },
  );
  if (stepped) stepped.idle = () => operator.idle;
  const reports: PassReport[] = [];
  operator.onPass((r) => reports.push(r));
  await operator.start();
  return {
    emulator,
    operator,
    metrics,
    reports,
    stepped,
    eventually: (check, timeoutMs = 10_000, intervalMs = 50) =>
      stepped
        ? steppedEventually(
            stepped,
            check,
            timeoutMs * speed,
            intervalMs * speed,
            Math.min(timeoutMs, REAL_FLOOR_MS),
          )
        : eventually(check, timeoutMs, intervalMs),
    sleep: (ms) => (stepped ? stepped.advance(ms * speed) : new Promise((r) => setTimeout(r, ms))),
    async stop() {
      await operator.stop(2000);
      if (!options.emulatorInstance) await emulator.stop();
    },
  };
}

/**
 * Checks `check` every `stepMs` of virtual time until it passes, or until `budgetMs` of virtual
 * time and at least `realFloorMs` of real time have passed: what the test waits for may come from
 * outside the operator (a watch event, a kubectl run), which takes real time however little the
 * virtual clock needs. Each failed check also lets a real millisecond pass.
 */
async function steppedEventually<T>(
  clock: SteppedClock,
  check: () => Promise<T> | T,
  budgetMs: number,
  stepMs: number,
  realFloorMs: number,
): Promise<T> {
  const deadline = clock.nowMs() + budgetMs;
  const realDeadline = Date.now() + realFloorMs;
  for (;;) {
    try {
      await clock.settle();
      return await check();
    } catch (err) {
      if (clock.nowMs() >= deadline && Date.now() >= realDeadline) throw err;
      if (clock.nowMs() >= deadline) {
        await new Promise((r) => setTimeout(r, SPENT_RECHECK_MS));
        continue;
      }
      const started = Date.now();
      await clock.advance(Math.max(1, stepMs));
      // Paced: a step of the clock takes at least its share of real time at MAX_STEPPED_SPEED.
      const rest = stepMs / MAX_STEPPED_SPEED - (Date.now() - started);
      await new Promise((r) => setTimeout(r, Math.max(1, rest)));
    }
  }
}

/** What {@link operatorSuite} sets up, ready inside the tests. */
export interface OperatorSuite {
  kube: KubeClients;
  /** A fresh namespace, the only one the operator watches. */
  ns: string;
  h: Harness;
}

/**
 * The set-up of an operator test file: before its tests the CRD, admin clients, a fresh namespace
 * named after `prefix` and an operator watching it ({@link startHarness} with `options`); after
 * them the operator and emulator stop. Read the fields inside tests and hooks, not before.
 */
export function operatorSuite(
  prefix: string,
  options: {
    emulator?: EmulatorOptions;
    operator?: OperatorSettings;
    azure?: Partial<AzureConnection>;
    stepped?: boolean;
  } = {},
): OperatorSuite {
  const suite = {} as OperatorSuite;
  beforeAll(async () => {
    await ensureCrd();
    suite.kube = adminClients();
    suite.ns = await createNamespace(suite.kube, prefix);
    suite.h = await startHarness(suite.kube, {
      ...options,
      operator: { namespaces: [suite.ns], ...options.operator },
    });
  });
  afterAll(async () => {
    await suite.h?.stop();
  });
  return suite;
}

/** One test's operator, from {@link operatorPerTest}. */
export interface ChatOperator {
  kube: KubeClients;
  /** A fresh namespace, the only one the operator watches. */
  ns: string;
  /** The instance `chat`: Premium_P1 × 10 with 2,000 connections. */
  id: string;
  /** Every request the emulator served. */
  requests: ReturnType<typeof requestCollector>;
  harness: Harness;
}

/**
 * The set-up of an operator test file whose tests each start their own operator: before its tests
 * the CRD and admin clients (`kube`); `start(prefix, emulator?)` makes a fresh namespace named after
 * `prefix`, an operator watching it with an emulator (speed 60 unless `emulator` says otherwise)
 * that records its requests, the instance `chat` and the Deployment `chat-hub` (3 replicas); after
 * each test its operator and emulator stop. `stepped`: each operator on a {@link SteppedClock}.
 */
export function operatorPerTest(options: { stepped?: boolean } = {}): {
  kube: KubeClients;
  start(
    prefix: string,
    emulator?: Omit<EmulatorOptions, "onRequest">,
    azure?: Partial<AzureConnection>,
  ): Promise<ChatOperator>;
} {
  let current: Harness | undefined;
  const suite = {
    kube: undefined as unknown as KubeClients,
    async start(
      prefix: string,
      emulator: Omit<EmulatorOptions, "onRequest"> = {},
      azure?: Partial<AzureConnection>,
    ): Promise<ChatOperator> {
      const { kube } = suite;
      const ns = await createNamespace(kube, prefix);
      const requests = requestCollector();
      const harness = await startHarness(kube, {
        operator: { namespaces: [ns] },
        emulator: { speed: 60, ...emulator, onRequest: requests.onRequest },
        ...(azure ? { azure } : {}),
        ...(options.stepped ? { stepped: true } : {}),
      });
      current = harness;
      const id = signalrId("chat");
      harness.emulator.control.addInstance({
        resourceId: id,
        sku: "Premium_P1",
        units: 10,
        connections: 2000,
      });
      await createDeployment(kube, ns, "chat-hub", 3);
      return { kube, ns, id, requests, harness };
    },
  };
  beforeAll(async () => {
    await ensureCrd();
    suite.kube = adminClients();
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  return suite;
}
