/**
 * A 409 on the status write: one reconcile pass (src/controller/reconcile.ts) against the real API
 * server and the emulator, with a PolicyClient whose first status write loses a race to another
 * writer. The pass reads the policy again and writes once more — the ARM update is not repeated.
 */
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../../src/api/index.js";
import { createAzureAdapters, parseResourceId } from "../../src/azure/index.js";
import { CycleFetcher } from "../../src/controller/fetch.js";
import { OperatorMetrics } from "../../src/controller/metrics.js";
import { type PassDeps, reconcile } from "../../src/controller/reconcile.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { ConflictError } from "../../src/kube/errors.js";
import { EventRecorder } from "../../src/kube/events.js";
import { PolicyClient, type StatusPatch } from "../../src/kube/policies.js";
import { WorkloadClient } from "../../src/kube/workloads.js";
import { startTestEmulator, staticCredential } from "../azure/helpers.js";
import { adminClients, createNamespace, ensureCrd } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { signalrId } from "./harness.js";
import { armWritesFor, condition, createPolicy, eventsOnce, getPolicy, policyManifest } from "./helpers.js";

/** A PolicyClient whose first status write finds the policy changed by someone else. */
class RacingPolicyClient extends PolicyClient {
  readonly writes: { resourceVersion: string | undefined; error?: string }[] = [];
  gets = 0;

  constructor(
    clients: KubeClients,
    private readonly other: () => Promise<void>,
  ) {
    super(clients);
  }

  override async get(namespace: string, name: string): Promise<CapacityPolicy> {
    this.gets++;
    return super.get(namespace, name);
  }

  override async patchStatus(
    namespace: string,
    name: string,
    statusPatch: StatusPatch,
    resourceVersion?: string,
  ): Promise<CapacityPolicy> {
    if (this.writes.length === 0) await this.other();
    const entry: (typeof this.writes)[number] = { resourceVersion };
    this.writes.push(entry);
    try {
      return await super.patchStatus(namespace, name, statusPatch, resourceVersion);
    } catch (err) {
      entry.error = err instanceof Error ? err.name : String(err);
      throw err;
    }
  }
}

let kube: KubeClients;
let ns: string;
let emulator: RunningEmulator;

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
  ns = await createNamespace(kube, "status409");
  // A stopped virtual clock: the pass sees a fixed time.
  emulator = await startTestEmulator({ ingestionDelayMs: 120_000, noiseAmplitude: 0, armRateLimit: false });
});

afterAll(async () => {
  await emulator?.stop();
});

/**
 * The policy `name` on a new instance of 10 units with 9,000 connections for the last day (the pass
 * scales out to 20): the stored policy, what a pass reads of it from the emulator, and the pass's
 * dependencies around a given PolicyClient.
 */
async function scaleOutCase(name: string) {
  const id = signalrId(name);
  emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 9000 });
  await createPolicy(kube, policyManifest(ns, name, id, { units: { min: 10, max: 50 } }));
  const policy = await getPolicy(kube, ns, name);
  const now = () => emulator.clock.nowMs();
  const azure = createAzureAdapters({
    credential: staticCredential(),
    armEndpoint: emulator.armEndpoint,
    metricsEndpoint: emulator.metricsEndpoint,
    ca: emulator.caPem,
    now: () => new Date(now()),
  });
  const key = `${ns}/${name}`;
  const reading = (
    await new CycleFetcher(azure, { now }).read([
      { key, resourceId: id, ref: parseResourceId(id), service: "SignalR", lookbackMs: 900_000 },
    ])
  ).get(key);
  const deps = (policies: PolicyClient): PassDeps => ({
    policies,
    workloads: new WorkloadClient(kube),
    events: new EventRecorder(kube),
    instances: azure.instances,
    log: pino({ level: "silent" }),
    metrics: new OperatorMetrics({ now, processMetrics: false }),
    now,
    canWrite: () => true,
    signal: new AbortController().signal,
  });
  return { id, policy, reading, deps };
}

describe("a 409 on the status write", () => {
  it("is retried on a fresh read of the policy without repeating the ARM update", async () => {
    const { id, policy, reading, deps } = await scaleOutCase("chat");
    expect(reading?.instance?.units).toBe(10);
    expect(reading?.samples?.length).toBeGreaterThan(0);

    // Another writer changes the status between the pass's read and its write: Ready=True since 2020.
    const other = async () => {
      await new PolicyClient(kube, "someone-else").patchStatus(ns, "chat", {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Reconciled",
            message: "written by another writer",
            lastTransitionTime: "2020-01-01T00:00:00Z",
          },
        ],
      });
    };
    const policies = new RacingPolicyClient(kube, other);
    emulator.control.resetRequests();

    const result = await reconcile(policy, reading, deps(policies));

    expect(result.outcome).toBe("scaled");
    // One ARM update, two status writes: the first refused with 409, the second on a fresh read.
    expect(armWritesFor(emulator.control.requests(), id)).toHaveLength(1);
    expect(emulator.control.calls().armWrites).toBe(1);
    expect(policies.writes).toHaveLength(2);
    expect(policies.writes[0]).toEqual({
      resourceVersion: policy.metadata.resourceVersion,
      error: ConflictError.name,
    });
    expect(policies.gets).toBe(1);
    expect(policies.writes[1]?.error).toBeUndefined();
    expect(policies.writes[1]?.resourceVersion).not.toBe(policy.metadata.resourceVersion);

    const stored = await getPolicy(kube, ns, "chat");
    expect(stored.status?.operation?.to).toEqual({ sku: "Premium_P1", units: 20 });
    expect(stored.status?.current).toEqual({ sku: "Premium_P1", units: 10 });
    expect(stored.status?.desired).toMatchObject({ sku: "Premium_P1", units: 20 });
    // The history records the change when its completion is observed, not when it is sent.
    expect(stored.status?.scaleEvents ?? []).toEqual([]);
    // The conditions were stamped against the fresh read: Ready stayed True, so its
    // lastTransitionTime is the other writer's; the message is the operator's.
    const ready = condition(stored, "Ready");
    expect(ready).toMatchObject({ status: "True", lastTransitionTime: "2020-01-01T00:00:00Z" });
    expect(ready?.message).not.toBe("written by another writer");
    expect(emulator.control.instance(id)?.provisioningState).toBe("Updating");
    // The scale's Event was recorded once, after the successful write.
    const events = await eventsOnce(kube, ns, "chat", (es) => es.some((e) => e.reason === "ScalingOut"));
    expect(events.filter((e) => e.reason === "ScalingOut")).toHaveLength(1);
    recordFault({
      id: "status-409-once",
      endpoint: "kube-apiserver",
      fault: "409 Conflict on the status write after an accepted update (another writer)",
      outcome: "the status written on a fresh read; one ARM update; one Event",
      test: "test/operator/status-conflict.test.ts › is retried on a fresh read",
      figures: { armWrites: 1, statusWrites: policies.writes.length, scalingOutEvents: 1 },
    });
  });

  it("gives up after a bounded number of 409s, still without a second ARM update", async () => {
    const { id, policy, reading, deps } = await scaleOutCase("busy");

    /** Every status write is refused, as if someone kept changing the policy. */
    class AlwaysConflicting extends PolicyClient {
      writes = 0;
      override async patchStatus(namespace: string, name: string): Promise<CapacityPolicy> {
        this.writes++;
        throw new ConflictError(
          `Operation cannot be fulfilled on capacitypolicies "${name}": the object has been modified`,
          {
            status: 409,
            reason: "Conflict",
            operation: `patch status of capacitypolicies ${namespace}/${name}`,
          },
        );
      }
    }
    const policies = new AlwaysConflicting(kube);
    emulator.control.resetRequests();
    await expect(reconcile(policy, reading, deps(policies))).rejects.toBeInstanceOf(ConflictError);
    expect(policies.writes).toBeGreaterThan(1);
    expect(policies.writes).toBeLessThanOrEqual(5);
    expect(armWritesFor(emulator.control.requests(), id)).toHaveLength(1);
    recordFault({
      id: "status-409-repeated",
      endpoint: "kube-apiserver",
      fault: "409 Conflict on every status write",
      outcome: "the pass gives up after a bounded number of tries, without a second ARM update",
      test: "test/operator/status-conflict.test.ts › gives up after a bounded number of 409s",
      figures: { statusWriteTries: policies.writes, armWrites: 1 },
    });
  });
});
