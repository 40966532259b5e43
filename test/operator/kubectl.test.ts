/**
 * What a user sees with the real kubectl: `kubectl get capol` (service, SKU, units, desired, load,
 * connections, replicas, mode, ready, age) and `kubectl describe capol` (conditions with reasons
 * and messages, and the Events).
 */
import { describe, expect, it } from "vitest";
import { CHAT_HUB, createDeployment, eventually, kubectl } from "../kube/support.js";
import { operatorSuite, signalrId } from "./harness.js";
import { condition, createPolicy, getPolicy, policyManifest } from "./helpers.js";

const suite = operatorSuite("kubectl", {
  // The virtual clock starts in the past, so Events and conditions (stamped on it) have real ages.
  emulator: { speed: 60, start: new Date(Date.now() - 6 * 3_600_000) },
});

/** The rows of a kubectl table, cut at the header's column starts (empty cells stay empty). */
function table(text: string): string[][] {
  const lines = text.trimEnd().split("\n");
  const header = lines[0] ?? "";
  const starts = [...header.matchAll(/\S+/g)].map((m) => m.index);
  return lines.map((line) =>
    starts.map((start, i) => line.slice(start, i + 1 < starts.length ? starts[i + 1] : undefined).trim()),
  );
}

describe("kubectl", () => {
  it("get capol shows the columns a user needs, describe shows conditions and Events", async () => {
    const { kube, ns, h } = suite;
    const chat = signalrId("chat");
    const dryRun = signalrId("dry-run");
    const broken = signalrId("broken");
    h.emulator.control.addInstance({ resourceId: chat, sku: "Premium_P1", units: 10, connections: 9000 });
    h.emulator.control.addInstance({ resourceId: dryRun, sku: "Standard_S1", units: 2, connections: 1500 });
    h.emulator.control.addInstance({ resourceId: broken, sku: "Premium_P1", units: 5, connections: 1000 });
    await createDeployment(kube, ns, "chat-hub", 3);
    await createPolicy(
      kube,
      policyManifest(ns, "chat", chat, {
        units: { min: 10, max: 50 },
        appServer: CHAT_HUB,
      }),
    );
    await createPolicy(
      kube,
      policyManifest(ns, "dry-run", dryRun, {
        skus: ["Standard_S1"],
        units: { min: 1, max: 10 },
        mode: "Recommend",
      }),
    );
    await createPolicy(
      kube,
      policyManifest(ns, "broken", broken, {
        schedules: [
          { name: "peak", cron: "0 8 * * *", timeZone: "Nowhere/Atlantis", durationMinutes: 60, minUnits: 5 },
        ],
      }),
    );

    await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current).toMatchObject({ units: 20, replicas: 10 });
        expect(p.status?.operation).toBeUndefined();
        expect(condition(p, "Ready")?.status).toBe("True");
        const d = await getPolicy(kube, ns, "dry-run");
        expect(d.status?.desired?.units).toBe(3);
        const b = await getPolicy(kube, ns, "broken");
        expect(condition(b, "Ready")?.reason).toBe("InvalidSpec");
      },
      80_000,
      500,
    );

    const text = await kubectl(["get", "capol", "-n", ns, "--sort-by=.metadata.name"]);
    const rows = table(text);
    expect(rows[0]).toEqual([
      "NAME",
      "SERVICE",
      "SKU",
      "UNITS",
      "DESIRED",
      "LOAD",
      "CONNECTIONS",
      "REPLICAS",
      "MODE",
      "READY",
      "AGE",
    ]);
    const byName = new Map(rows.slice(1).map((r) => [r[0], r]));
    const chatStatus = (await getPolicy(kube, ns, "chat")).status;
    const chatRow = byName.get("chat");
    expect(chatRow?.slice(0, 5)).toEqual(["chat", "SignalR", "Premium_P1", "20", "20"]);
    // Load as a person reads it: one decimal at most.
    expect(chatRow?.[5]).toMatch(/^\d{1,3}(\.\d)?$/);
    expect(chatStatus?.lastSample?.serverLoadPercent).toBeGreaterThan(0);
    expect(Number(chatRow?.[6])).toBeGreaterThan(9000);
    expect(chatRow?.slice(7, 10)).toEqual(["10", "Auto", "True"]);
    expect(chatRow?.[10]).toMatch(/^\d+(s|m)/);
    expect(byName.get("dry-run")?.slice(0, 5)).toEqual(["dry-run", "SignalR", "Standard_S1", "2", "3"]);
    expect(byName.get("dry-run")?.[5]).toMatch(/^\d{1,3}(\.\d)?$/);
    expect(byName.get("dry-run")?.slice(7, 10)).toEqual(["", "Recommend", "True"]);
    // An invalid policy has no capacity yet: empty cells, Ready False.
    expect(byName.get("broken")?.slice(1, 4)).toEqual(["SignalR", "", ""]);
    expect(byName.get("broken")?.slice(-3, -1)).toEqual(["Auto", "False"]);

    const described = await kubectl(["describe", "capol", "chat", "-n", ns]);
    expect(described).toMatch(/^Name:\s+chat$/m);
    expect(described).toMatch(/^Kind:\s+CapacityPolicy$/m);
    // Conditions with their reasons and messages.
    for (const type of [
      "Ready",
      "MetricsAvailable",
      "AbleToScale",
      "ScalingActive",
      "ScalingLimited",
      "Fallback",
      "Conflict",
    ]) {
      expect(described).toMatch(new RegExp(`Type:\\s+${type}\\n`));
    }
    expect(described).toMatch(
      /Message:\s+every signal is known over the whole window\n\s+Observed Generation:\s+1\n\s+Reason:\s+MetricsComplete\n\s+Status:\s+True\n\s+Type:\s+MetricsAvailable/,
    );
    expect(described).toMatch(/Reason:\s+Reconciled\n\s+Status:\s+True\n\s+Type:\s+Ready/);
    expect(described).toMatch(/Reason:\s+NoConflict\n\s+Status:\s+False\n\s+Type:\s+Conflict/);
    expect(described).toMatch(/Current:\n\s+Replicas:\s+10\n\s+Sku:\s+Premium_P1\n\s+Units:\s+20/);
    // The Events, with reason, source and message.
    expect(described).toMatch(/^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/m);
    expect(described).toMatch(
      /Normal\s+ScalingOut\s+\S+\s+signalr-autoscaler\s+Premium_P1 × 10 → Premium_P1 × 20 units/,
    );
    expect(described).toMatch(
      /Normal\s+ScaleSucceeded\s+\S+\s+signalr-autoscaler\s+Premium_P1 × 20 units in place/,
    );
    expect(described).toMatch(
      /Normal\s+AppServersScaled\s+\S+\s+signalr-autoscaler\s+Deployment chat-hub replicas 3 → 10/,
    );
    expect(described).not.toMatch(/<invalid>/);

    const brokenText = await kubectl(["describe", "capol", "broken", "-n", ns]);
    expect(brokenText).toMatch(
      /Message:\s+spec\.schedules\[0\]\.timeZone: unknown time zone "Nowhere\/Atlantis"\n\s+Observed Generation:\s+1\n\s+Reason:\s+InvalidSpec\n\s+Status:\s+False\n\s+Type:\s+Ready/,
    );
    expect(brokenText).toMatch(
      /Warning\s+InvalidSpec\s+\S+\s+signalr-autoscaler\s+Ready=False: spec\.schedules\[0\]\.timeZone/,
    );
  });
});
