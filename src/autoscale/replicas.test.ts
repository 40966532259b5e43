import { describe, expect, it } from "vitest";
import type { AppServerSpec } from "../api/index.js";
import { decideReplicas, type ReplicaInput } from "./replicas.js";

const app = (extra: Partial<AppServerSpec> = {}): AppServerSpec => ({
  deploymentName: "chat-hub",
  replicas: { min: 1, max: 50 },
  ...extra,
});
const base = (extra: Partial<ReplicaInput> = {}): ReplicaInput => ({
  appServer: app(),
  service: "SignalR",
  scenarios: [],
  units: 20,
  connections: { status: "Unknown" },
  events: { status: "Unknown" },
  ...extra,
});

describe("decideReplicas", () => {
  it.each<[string, Partial<ReplicaInput>, number, string]>([
    ["echo table at 20 units (1 per 10 units)", {}, 2, "table"],
    ["echo table at 100 units", { units: 100 }, 10, "table"],
    ["broadcast table at 100 units", { units: 100, scenarios: ["broadcast"] }, 2, "table"],
    ["the most any scenario needs", { units: 100, scenarios: ["broadcast", "echo"] }, 10, "table"],
    [
      "connections per replica",
      { appServer: app({ connectionsPerReplica: 5000 }), connections: { value: 12_001, status: "Ok" } },
      3,
      "connections",
    ],
    [
      "events per second per replica",
      { appServer: app({ eventsPerSecondPerReplica: 200 }), events: { value: 1000, status: "Ok" } },
      5,
      "events",
    ],
    [
      "with both, the larger",
      {
        appServer: app({ connectionsPerReplica: 5000, eventsPerSecondPerReplica: 200 }),
        connections: { value: 30_000, status: "Ok" },
        events: { value: 100, status: "Ok" },
      },
      6,
      "connections",
    ],
    ["clamped to min", { appServer: app({ replicas: { min: 4, max: 50 } }) }, 4, "table"],
    ["clamped to max", { units: 1000, appServer: app({ replicas: { min: 1, max: 30 } }) }, 30, "table"],
  ])("%s → %s (%s)", (_n, extra, replicas, basis) => {
    const r = decideReplicas(base(extra));
    expect(r.replicas).toBe(replicas);
    expect(r.basis).toBe(basis);
  });

  it("unknown measured input keeps the current replicas", () => {
    const r = decideReplicas(base({ appServer: app({ connectionsPerReplica: 1000 }), currentReplicas: 7 }));
    expect(r.replicas).toBe(7);
    expect(r.basis).toBe("held");
    expect(r.reasons.map((x) => x.code)).toContain("ReplicasHeld");
  });

  it("incomplete measured input may raise the replicas but not lower them", () => {
    const at7 = (connections: number) =>
      decideReplicas(
        base({
          appServer: app({ connectionsPerReplica: 1000 }),
          connections: { value: connections, status: "Incomplete" },
          currentReplicas: 7,
        }),
      ).replicas;
    expect(at7(2000)).toBe(7);
    expect(at7(9000)).toBe(9);
  });

  it("with an HPA named, the count is a minReplicas floor, not a replica count", () => {
    const r = decideReplicas(
      base({ appServer: app({ horizontalPodAutoscalerName: "chat-hub" }), units: 100, currentReplicas: 25 }),
    );
    expect(r.replicas).toBeUndefined();
    expect(r.hpaMinReplicas).toBe(10);
    expect(r.reasons.map((x) => x.code)).toContain("HpaFloor");
  });

  it("Web PubSub without a per-replica rate keeps the replicas", () => {
    const r = decideReplicas(base({ service: "WebPubSub", currentReplicas: 3 }));
    expect(r.replicas).toBe(3);
    expect(r.basis).toBe("held");
  });
});
