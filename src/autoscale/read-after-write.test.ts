/**
 * Read after write: a GET right after ARM accepted the PATCH may still show the old size with
 * Succeeded. Within the grace (two poll intervals or 60 s, whichever is longer, from the PATCH)
 * that reads as "still in flight" — no ScaleNotApplied, no second update; after it, as "not
 * applied". A Failed or Canceled state is read as it is at once.
 */
import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { historyFromStatus } from "./history.js";
import {
  type InstanceView,
  observeOperation,
  READ_AFTER_WRITE_GRACE_MIN_MS,
  readAfterWriteGraceMs,
} from "./operation.js";
import { completePass, mergeStatus, planPass } from "./pass.js";
import { NOW, policy, samples, spec } from "./testing.js";

const iso = (ms: number) => new Date(ms).toISOString();
const old: InstanceView = { sku: "Premium_P1", units: 10, provisioningState: "Succeeded", terminal: true };
const op = (sentMs: number) =>
  ({
    startedAt: iso(sentMs),
    from: { sku: "Premium_P1", units: 10 },
    to: { sku: "Premium_P1", units: 20 },
  }) as const;

describe("readAfterWriteGraceMs", () => {
  it("is two poll intervals, at least 60 s", () => {
    expect(readAfterWriteGraceMs(15)).toBe(READ_AFTER_WRITE_GRACE_MIN_MS);
    expect(readAfterWriteGraceMs(30)).toBe(60_000);
    expect(readAfterWriteGraceMs(45)).toBe(90_000);
    expect(readAfterWriteGraceMs(120)).toBe(240_000);
  });
});

describe("observeOperation within the grace", () => {
  const history = historyFromStatus({});
  it.each([
    [1_000, "inFlight"],
    [59_000, "inFlight"],
    [60_000, "notApplied"],
    [600_000, "notApplied"],
  ])("the old size Succeeded %i ms after the PATCH: %s", (afterMs, expected) => {
    const o = observeOperation(op(NOW), old, history, iso(NOW + afterMs), 60_000);
    if (expected === "inFlight") {
      expect(o).toMatchObject({ busy: true, operation: op(NOW), events: [], counts: [] });
      expect(o.outcome).toBeUndefined();
    } else {
      expect(o.outcome).toBe("notApplied");
      expect(o.events.map((e) => e.reason)).toEqual(["ScaleNotApplied"]);
    }
  });

  it("Failed is read at once; the target size is applied at once; a recovered update has no grace", () => {
    const failed = observeOperation(
      op(NOW),
      { ...old, provisioningState: "Failed" },
      history,
      iso(NOW + 1000),
      60_000,
    );
    expect(failed.outcome).toBe("failed");
    const applied = observeOperation(op(NOW), { ...old, units: 20 }, history, iso(NOW + 1000), 60_000);
    expect(applied.outcome).toBe("succeeded");
    const found = observeOperation({ ...op(NOW), recovered: true }, old, history, iso(NOW + 1000), 60_000);
    expect(found.outcome).toBe("notApplied");
  });
});

describe("through the planner: the GET after the 202 shows the old size for 40 s", () => {
  it("no ScaleNotApplied, no second PATCH, no unapplied count; the update is recorded when it lands", () => {
    let status: Partial<CapacityPolicyStatus> = { current: { sku: "Premium_P1", units: 10 } };
    const sent: number[] = [];
    const events: string[] = [];
    for (let now = NOW; now < NOW + 5 * 60_000; now += 15_000) {
      const sentAt = sent[0];
      // Served from before the write for 40 s; then Updating; applied 2 min after the PATCH.
      const instance: InstanceView =
        sentAt === undefined || now < sentAt + 40_000
          ? old
          : now < sentAt + 120_000
            ? { ...old, provisioningState: "Updating", terminal: false }
            : { ...old, units: 20 };
      const plan = planPass({
        policy: policy(spec({ pollIntervalSeconds: 15 })),
        status,
        instance,
        samples: samples({ serverLoadPercent: 95 }, { now }),
        now,
      });
      if (plan.update) sent.push(now);
      const write = completePass(
        plan,
        plan.update ? { update: { kind: "accepted", startedAt: iso(now) } } : {},
      );
      events.push(...write.events.map((e) => e.reason));
      status = mergeStatus(status, write.patch);
      if (status.current?.units === 20) break;
    }
    expect(sent).toEqual([NOW]);
    expect(events).not.toContain("ScaleNotApplied");
    expect(events).toContain("ScaleSucceeded");
    expect(status.unappliedUpdates).toBeUndefined();
    expect(status.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20, startedAt: iso(NOW) });
  });
});
