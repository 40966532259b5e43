import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import type { InstanceView } from "./operation.js";
import { completePass, mergeStatus, type PassResults, type PassWrite, planPass } from "./pass.js";
import { NOW, policy, samples, spec } from "./testing.js";
import { nextUnapplied, UNAPPLIED_LIMIT, type UnappliedUpdates, unappliedHold } from "./unapplied.js";

const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;
const view = (units: number, state = "Succeeded"): InstanceView => ({
  sku: "Premium_P1",
  units,
  provisioningState: state,
  terminal: state !== "Updating",
});
const stored = (count: number, lastMs = NOW, generation = 1): UnappliedUpdates => ({
  count,
  lastTime: iso(lastMs),
  to: { sku: "Premium_P1", units: 20 },
  instance: { sku: "Premium_P1", units: 10 },
  generation,
  lastOutcome: "NotApplied",
});
const op = {
  startedAt: iso(NOW - 2 * MIN),
  from: { sku: "Premium_P1", units: 10 },
  to: { sku: "Premium_P1", units: 20 },
} as const;

describe("nextUnapplied and unappliedHold", () => {
  const seen = { instance: view(10), ours: false, generation: 1, nowIso: iso(NOW) };

  it("counts updates in a row that did not apply; one that applies clears the count", () => {
    const first = nextUnapplied(undefined, { ...seen, outcome: "notApplied", ended: op, ours: true });
    expect(first).toEqual(stored(1));
    expect(nextUnapplied(stored(2), { ...seen, outcome: "notApplied", ended: op, ours: true })?.count).toBe(
      3,
    );
    expect(
      nextUnapplied(stored(2), { ...seen, outcome: "succeeded", ended: op, instance: view(20) }),
    ).toBeUndefined();
  });

  it.each([
    ["the spec changed (generation)", { generation: 2 }],
    ["the instance has another size", { instance: view(30) }],
    ["an update not ours runs", { instance: view(10, "Updating") }],
  ])("cleared when %s", (_, change) => {
    expect(nextUnapplied(stored(UNAPPLIED_LIMIT), { ...seen, ...change })).toBeUndefined();
  });

  it("kept while our own retry runs or the instance could not be read", () => {
    expect(nextUnapplied(stored(2), { ...seen, instance: view(10, "Updating"), ours: true })).toEqual(
      stored(2),
    );
    expect(nextUnapplied(stored(2), { ...seen, instance: undefined })).toEqual(stored(2));
  });

  it("waits 1, 2, 4, 8 minutes after the 1st … 4th; stops after the 5th", () => {
    const waits = [1, 2, 3, 4].map((k) => {
      const h = unappliedHold(stored(k), NOW);
      return ((h?.notBeforeMs ?? 0) - NOW) / MIN;
    });
    expect(waits).toEqual([1, 2, 4, 8]);
    expect(unappliedHold(stored(1), NOW + MIN)).toBeUndefined();
    const stop = unappliedHold(stored(UNAPPLIED_LIMIT), NOW + 24 * 60 * MIN);
    expect(stop).toMatchObject({ stopped: true });
    expect(stop?.message).toContain("no more are sent until the spec or the instance changes");
    expect(unappliedHold(undefined, NOW)).toBeUndefined();
  });

  it("counts updates that end Failed or Canceled the same way, with reason UpdateFailed", () => {
    const failed = nextUnapplied(undefined, {
      ...seen,
      instance: view(10, "Failed"),
      outcome: "failed",
      ended: op,
      ours: true,
    });
    expect(failed).toEqual({ ...stored(1), lastOutcome: "Failed" });
    const canceled = nextUnapplied(failed, {
      ...seen,
      instance: view(10, "Canceled"),
      outcome: "failed",
      ended: op,
      ours: true,
    });
    expect(canceled).toMatchObject({ count: 2, lastOutcome: "Canceled" });
    // Mixed in a row: one count, the reason of the last.
    const ignored = nextUnapplied(canceled, { ...seen, outcome: "notApplied", ended: op, ours: true });
    expect(ignored).toMatchObject({ count: 3, lastOutcome: "NotApplied" });
    expect(unappliedHold(ignored, NOW)?.reason).toBe("UpdateNotApplied");
    const hold = unappliedHold(failed, NOW);
    expect(hold).toMatchObject({ reason: "UpdateFailed", stopped: false, notBeforeMs: NOW + MIN });
    expect(hold?.message).toContain("1 update in a row did not take (the last ended Failed");
    expect(unappliedHold({ ...stored(UNAPPLIED_LIMIT), lastOutcome: "Failed" }, NOW)).toMatchObject({
      reason: "UpdateFailed",
      stopped: true,
    });
    // Kept while the instance stays Failed at its size; cleared when it changes from outside.
    expect(nextUnapplied(failed, { ...seen, instance: view(10, "Failed") })).toEqual(failed);
    expect(nextUnapplied(failed, { ...seen, instance: view(20, "Succeeded") })).toBeUndefined();
  });

  it("reads a count or a time others wrote within the rules: never a longer wait than the backoff", () => {
    // A last time to come is read as now: a minute's wait, not a century's.
    expect(unappliedHold({ ...stored(1), lastTime: "2999-01-01T00:00:00Z" }, NOW)?.notBeforeMs).toBe(
      NOW + MIN,
    );
    // A count that is no whole number ≥ 1 is read as 1.
    for (const count of [Number.NaN, -3, 0]) {
      expect(unappliedHold({ ...stored(1), count }, NOW)).toMatchObject({
        stopped: false,
        notBeforeMs: NOW + MIN,
      });
      expect(
        nextUnapplied({ ...stored(1), count }, { ...seen, outcome: "notApplied", ended: op, ours: true })
          ?.count,
      ).toBe(2);
    }
    // A huge count: stopped, as after the limit.
    expect(unappliedHold({ ...stored(1), count: 1e9 }, NOW)?.stopped).toBe(true);
  });
});

describe("an instance that ignores every update, through the planner", () => {
  /**
   * Passes every 30 s for `minutes`: P1 × 10 at 95 % load (the policy wants 20); every update
   * runs 2 min and ends Succeeded with 10 units. Returns the updates sent and every write.
   */
  function run(
    status0: Partial<CapacityPolicyStatus>,
    from: number,
    minutes: number,
    generation = 1,
    ends = "Succeeded",
    maxUnits = 100,
  ): { sent: number[]; asked: number[]; writes: PassWrite[]; status: Partial<CapacityPolicyStatus> } {
    let status = status0;
    let doneMs: number | undefined;
    const sent: number[] = [];
    const asked: number[] = [];
    const writes: PassWrite[] = [];
    const p = policy(spec({ units: { min: 10, max: maxUnits } }));
    p.metadata = { generation };
    for (let now = from; now < from + minutes * MIN; now += 30_000) {
      if (doneMs !== undefined && now >= doneMs) doneMs = undefined;
      const settled = sent.length > 0 || status.unappliedUpdates ? ends : "Succeeded";
      const instance = view(10, doneMs !== undefined ? "Updating" : settled);
      const plan = planPass({
        policy: p,
        status,
        instance,
        samples: samples({ serverLoadPercent: 95 }, { now }),
        now,
      });
      const results: PassResults = plan.update ? { update: { kind: "accepted", startedAt: iso(now) } } : {};
      if (plan.update) {
        sent.push(now);
        asked.push(plan.update.to.units);
        doneMs = now + 2 * MIN;
      }
      const write = completePass(plan, results);
      writes.push(write);
      status = mergeStatus(status, write.patch);
    }
    return { sent, asked, writes, status };
  }

  it(`sends ${UNAPPLIED_LIMIT} updates in 40 minutes, each to another count, backing off, then stops: Ready=False UpdateNotApplied, a Warning`, () => {
    const { sent, asked, writes, status } = run({}, NOW, 40);
    expect(sent).toHaveLength(UNAPPLIED_LIMIT);
    // A count answered but not applied is not asked for again (ladders.ts).
    expect(asked).toEqual([20, 30, 40, 50, 60]);
    expect(status.unitLadders?.excluded?.map((e) => e.units)).toEqual([20, 30, 40, 50, 60]);
    const gaps = sent.slice(1).map((t, i) => (t - (sent[i] as number)) / MIN);
    // 2 min of update, then 1, 2, 4, 8 min of backoff (passes every 30 s).
    expect(gaps).toEqual([3, 4, 6, 10]);
    expect(status.unappliedUpdates?.count).toBe(UNAPPLIED_LIMIT);
    const last = writes.at(-1) as PassWrite;
    expect(last.drafts.find((d) => d.type === "Ready")).toMatchObject({
      status: "False",
      reason: "UpdateNotApplied",
    });
    expect(last.drafts.find((d) => d.type === "AbleToScale")).toMatchObject({
      status: "False",
      reason: "UpdateNotApplied",
    });
    const warnings = writes.flatMap((w) => w.events).filter((e) => e.reason === "UpdateNotApplied");
    expect(warnings).toHaveLength(UNAPPLIED_LIMIT);
    expect(warnings.at(-1)?.message).toContain("no more are sent");
    expect(warnings[0]?.message).toContain("try 2 of 5");

    // A day later: still stopped.
    expect(run(status, NOW + 24 * 60 * MIN, 10).sent).toHaveLength(0);
    // The spec changes (generation 2): the tries resume, from the first count again.
    const resumed = run(status, NOW + 24 * 60 * MIN, 10, 2);
    expect(resumed.sent.length).toBeGreaterThanOrEqual(1);
    expect(resumed.sent[0]).toBe(NOW + 24 * 60 * MIN);
    expect(resumed.asked[0]).toBe(20);
  });

  it("with every count up to units.max ignored, stops before the limit: no count is left to ask for", () => {
    const { asked, writes, status } = run({}, NOW, 40, 1, "Succeeded", 50);
    expect(asked).toEqual([20, 30, 40, 50]);
    expect(status.unappliedUpdates?.count).toBe(4);
    const last = writes.at(-1) as PassWrite;
    for (const type of ["Ready", "AbleToScale"]) {
      expect(last.drafts.find((d) => d.type === type)).toMatchObject({
        status: "False",
        reason: "UpdateNotApplied",
      });
    }
    expect(last.drafts.find((d) => d.type === "Ready")?.message).toContain(
      "no unit count is left to ask for",
    );
    expect(last.decision?.reasons.map((r) => r.code)).toContain("UnitLadder");
  });

  it(`an instance whose every update ends Failed: ${UNAPPLIED_LIMIT} tries in 40 minutes, then Ready=False UpdateFailed`, () => {
    const { sent, writes, status } = run({}, NOW, 40, 1, "Failed");
    expect(sent).toHaveLength(UNAPPLIED_LIMIT);
    const gaps = sent.slice(1).map((t, i) => (t - (sent[i] as number)) / MIN);
    expect(gaps).toEqual([3, 4, 6, 10]);
    expect(status.unappliedUpdates).toMatchObject({ count: UNAPPLIED_LIMIT, lastOutcome: "Failed" });
    const last = writes.at(-1) as PassWrite;
    for (const type of ["Ready", "AbleToScale"]) {
      expect(last.drafts.find((d) => d.type === type)).toMatchObject({
        status: "False",
        reason: "UpdateFailed",
      });
    }
    const events = writes.flatMap((w) => w.events);
    expect(events.filter((e) => e.reason === "ScaleFailed")).toHaveLength(UNAPPLIED_LIMIT);
    const warnings = events.filter((e) => e.type === "Warning" && e.reason === "UpdateFailed");
    expect(warnings).toHaveLength(UNAPPLIED_LIMIT);
    expect(warnings.at(-1)?.message).toContain("no more are sent until the spec or the instance changes");
    expect(run(status, NOW + 24 * 60 * MIN, 10, 1, "Failed").sent).toHaveLength(0);
    expect(run(status, NOW + 24 * 60 * MIN, 10, 2, "Failed").sent[0]).toBe(NOW + 24 * 60 * MIN);
  });
});
