import { describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../api/index.js";
import type { PassWrite } from "../autoscale/index.js";
import { ConflictError, NotFoundError } from "../kube/errors.js";
import type { EventRecorder } from "../kube/events.js";
import type { PolicyClient } from "../kube/policies.js";
import { createLogger } from "./logging.js";
import { StatusMemory } from "./status-memory.js";
import { writeStatus } from "./status-write.js";
import { T0 } from "./testing.js";

const policy = {
  apiVersion: "autoscaling.signalr.dev/v1alpha1",
  kind: "CapacityPolicy",
  metadata: { namespace: "ns", name: "chat", generation: 1, resourceVersion: "7" },
  spec: {},
  status: {},
} as unknown as CapacityPolicy;

const write: PassWrite = {
  patch: { current: { sku: "Premium_P1", units: 10 } },
  drafts: [{ type: "MetricsAvailable", status: "True", reason: "MetricsComplete", message: "known" }],
  events: [{ type: "Normal", reason: "Scaled", message: "Premium_P1 10 → 20" }],
  counts: [],
  outcome: "scaled",
  requeueAfterMs: 60_000,
};

/** A policy client whose status writes and reads answer as `answers` says, in turn; calls are counted. */
function policies(patch: (() => Error | undefined)[], get: () => CapacityPolicy | Error) {
  const calls = { patch: 0, get: 0 };
  const client = {
    async patchStatus() {
      const err = patch[calls.patch++]?.();
      if (err) throw err;
      return policy;
    },
    async get() {
      calls.get++;
      const answer = get();
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as PolicyClient;
  return { client, calls };
}

function recorder() {
  const recorded: string[] = [];
  const events = {
    async record(_subject: unknown, e: { reason: string }) {
      recorded.push(e.reason);
    },
  } as unknown as EventRecorder;
  return { events, recorded };
}

const notFound = () => new NotFoundError('capacitypolicies "chat" not found', { operation: "patch status" });
const conflict = () => new ConflictError("the object has been modified", { operation: "patch status" });

describe("writeStatus of a policy deleted while its pass ran", () => {
  for (const [label, patch, get] of [
    ["404 on the status write", [notFound], () => policy],
    ["409 on the write, then 404 on the re-read", [conflict], notFound],
    ["409, a re-read, then 404 on the second write", [conflict, notFound], () => policy],
  ] as const) {
    it(`${label}: gone, nothing remembered, no Event, nothing thrown`, async () => {
      const { client, calls } = policies([...patch], get);
      const { events, recorded } = recorder();
      const memory = new StatusMemory();
      memory.remember("ns/chat", {}, { current: { sku: "Premium_P1", units: 10 } }, T0);
      const result = await writeStatus(
        policy,
        {
          policies: client,
          events,
          log: createLogger({ level: "silent" }),
          now: () => T0 + 60_000,
          canWrite: () => true,
          statusMemory: memory,
          statusRefreshMs: 0,
        },
        write,
      );
      expect(result).toEqual({ gone: true });
      expect(recorded).toEqual([]);
      expect(memory.size).toBe(0);
      expect(calls.patch).toBe(patch.length);
    });
  }

  it("a write that succeeds: the conditions and the Events", async () => {
    const { client } = policies([], () => policy);
    const { events, recorded } = recorder();
    const result = await writeStatus(
      policy,
      {
        policies: client,
        events,
        log: createLogger({ level: "silent" }),
        now: () => T0,
        canWrite: () => true,
      },
      write,
    );
    expect(result.gone).toBe(false);
    expect(result.gone ? [] : result.conditions.map((c) => c.type)).toContain("MetricsAvailable");
    expect(recorded).toContain("Scaled");
  });

  it("other Kubernetes errors still throw (the operator retries with backoff)", async () => {
    const { client } = policies([() => new Error("etcd timeout")], () => policy);
    const memory = new StatusMemory();
    memory.remember("ns/chat", {}, { current: { sku: "Premium_P1", units: 10 } }, T0, ["7"]);
    await expect(
      writeStatus(
        policy,
        {
          policies: client,
          events: recorder().events,
          log: createLogger({ level: "silent" }),
          now: () => T0,
          canWrite: () => true,
          statusMemory: memory,
          statusRefreshMs: 0,
        },
        write,
      ),
    ).rejects.toThrow("etcd timeout");
    // Forgotten: the next pass starts from the stored status and recovers from the instance.
    expect(memory.size).toBe(0);
  });
});
