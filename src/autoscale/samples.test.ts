import { describe, expect, it } from "vitest";
import { type MetricSample, peak, type Series, series, windowSamples } from "./samples.js";
import { flatMean } from "./signals/common.js";
import { blank } from "./testing.js";

const T = (iso: string) => Date.parse(iso);
const opts = (now: string, extra: Partial<Parameters<typeof windowSamples>[1]> = {}) => ({
  nowMs: T(now),
  windowSeconds: 300,
  ingestionDelaySeconds: 180,
  maxSampleAgeSeconds: 600,
  ...extra,
});
const at = (iso: string, v: Partial<Omit<MetricSample, "time">>): MetricSample => ({
  ...blank(T(iso)),
  ...v,
});
const minutes = (from: string, n: number, v: Partial<Omit<MetricSample, "time">>) =>
  Array.from({ length: n }, (_, i) => at(new Date(T(from) + i * 60_000).toISOString(), v));

describe("windowSamples", () => {
  it.each([
    // now, delay, window → [from, to)
    ["2025-06-02T12:00:30Z", 180, 300, "2025-06-02T11:52:00.000Z", "2025-06-02T11:57:00.000Z"],
    ["2025-06-02T12:00:00Z", 180, 300, "2025-06-02T11:52:00.000Z", "2025-06-02T11:57:00.000Z"],
    ["2025-06-02T12:00:00Z", 0, 60, "2025-06-02T11:59:00.000Z", "2025-06-02T12:00:00.000Z"],
    ["2025-06-02T12:00:59Z", 90, 900, "2025-06-02T11:44:00.000Z", "2025-06-02T11:59:00.000Z"],
  ])("now %s, delay %ss, window %ss → [%s, %s)", (now, delay, win, from, to) => {
    const w = windowSamples([], opts(now, { ingestionDelaySeconds: delay, windowSeconds: win }));
    expect(new Date(w.from).toISOString()).toBe(from);
    expect(new Date(w.to).toISOString()).toBe(to);
    expect(w.buckets).toHaveLength(win / 60);
  });

  it("ignores buckets newer than the ingestion delay and older than the window", () => {
    const w = windowSamples(
      minutes("2025-06-02T11:45:00Z", 15, { serverLoadPercent: 50 }),
      opts("2025-06-02T12:00:00Z"),
    );
    // 11:45..11:59: 11:57, 11:58, 11:59 too new; 11:45..11:51 before the window.
    expect(w.ignored).toEqual({ tooNew: 3, beforeWindow: 7, invalid: 0 });
    expect(w.buckets.every((b) => b.sample?.serverLoadPercent === 50)).toBe(true);
  });

  it("floors times to the minute and merges duplicates (highest known value wins)", () => {
    const w = windowSamples(
      [
        at("2025-06-02T11:55:20Z", { serverLoadPercent: 40, connections: null }),
        at("2025-06-02T11:55:00Z", { serverLoadPercent: 30, connections: 100 }),
      ],
      opts("2025-06-02T12:00:00Z"),
    );
    const b = w.buckets.find((x) => x.start === T("2025-06-02T11:55:00Z"));
    expect(b?.sample?.serverLoadPercent).toBe(40);
    expect(b?.sample?.connections).toBe(100);
  });

  it.each([
    ["null", null],
    ["negative", -1],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
  ])("a %s value is unknown, never zero", (_name, value) => {
    const w = windowSamples(
      minutes("2025-06-02T11:52:00Z", 5, { serverLoadPercent: value as number | null }),
      opts("2025-06-02T12:00:00Z"),
    );
    const s = series(w, (b) => b.sample?.serverLoadPercent);
    expect(s.status).toBe("Unknown");
    expect(peak(s)).toBeUndefined();
  });

  it("accepts Date times and counts unreadable ones", () => {
    const good = { ...blank(0), time: new Date("2025-06-02T11:56:00Z"), serverLoadPercent: 10 };
    const bad = { ...blank(0), time: "yesterday" };
    const w = windowSamples([good, bad], opts("2025-06-02T12:00:00Z"));
    expect(w.ignored.invalid).toBe(1);
    expect(w.buckets[4]?.sample?.serverLoadPercent).toBe(10);
  });

  it("marks buckets before the end of the settle window", () => {
    const w = windowSamples([], opts("2025-06-02T12:00:00Z", { settleUntilMs: T("2025-06-02T11:54:00Z") }));
    expect(w.buckets.map((b) => b.settling)).toEqual([true, true, false, false, false]);
    expect(w.settling).toBe(true);
    const after = windowSamples(
      [],
      opts("2025-06-02T12:00:00Z", { settleUntilMs: T("2025-06-02T11:52:00Z") }),
    );
    expect(after.settling).toBe(false);
  });
});

describe("series", () => {
  const now = "2025-06-02T12:00:00Z";
  it.each<[string, (number | null)[], string, number | undefined]>([
    ["all known", [1, 2, 3, 4, 5], "Ok", 5],
    ["one gap", [1, null, 3, 4, 5], "Incomplete", 5],
    ["newest unknown", [1, 2, 3, 4, null], "Incomplete", 4],
    ["nothing known", [null, null, null, null, null], "Unknown", undefined],
  ])("%s → %s, peak %s", (_n, values, status, top) => {
    const samples = values.map((v, i) =>
      at(new Date(T("2025-06-02T11:52:00Z") + i * 60_000).toISOString(), { connections: v }),
    );
    const s = series(windowSamples(samples, opts(now)), (b) => b.sample?.connections);
    expect(s.status).toBe(status);
    expect(peak(s)).toBe(top);
    expect(s.expectedBuckets).toBe(5);
  });

  it("a newest known value older than maxSampleAge is stale (counts as missing)", () => {
    // 15-minute window, 10-minute max age: known values only 11+ minutes ago.
    const samples = minutes("2025-06-02T11:42:00Z", 7, { connections: 10 });
    const s = series(windowSamples(samples, opts(now, { windowSeconds: 900 })), (b) => b.sample?.connections);
    expect(s.status).toBe("Stale");
    expect(s.points).toEqual([]);
    expect(s.newest).toBe(T("2025-06-02T11:48:00Z"));
    const fresh = series(
      windowSamples(
        minutes("2025-06-02T11:42:00Z", 9, { connections: 10 }),
        opts(now, { windowSeconds: 900 }),
      ),
      (b) => b.sample?.connections,
    );
    expect(fresh.status).toBe("Incomplete");
  });
});

describe("flatMean", () => {
  const of = (values: number[], status: Series["status"] = "Ok"): Series => ({
    status,
    points: values.map((value, i) => ({ start: i * 60_000, value })),
    knownBuckets: values.length,
    expectedBuckets: values.length,
  });

  it("the mean when every value is within the band of it", () => {
    expect(flatMean(of([9.5, 10.5, 10, 10]), 0.1)).toBeCloseTo(10, 12);
    // 11 is exactly 10 % above the mean of 10: inside (≤).
    expect(flatMean(of([9, 11, 10]), 0.1)).toBeCloseTo(10, 12);
    // A band of 0: only equal values.
    expect(flatMean(of([10, 10, 10]), 0)).toBeCloseTo(10, 12);
  });

  it("undefined for a value outside it, a window not complete, fewer than 3 values, or a zero level", () => {
    expect(flatMean(of([9, 12, 9]), 0.1)).toBeUndefined();
    expect(flatMean(of([10, 10, 10], "Incomplete"), 0.1)).toBeUndefined();
    expect(flatMean(of([10, 10]), 0.1)).toBeUndefined();
    expect(flatMean(of([0, 0, 0]), 0.1)).toBeUndefined();
    expect(flatMean(of([10, 10.5, 10]), 0)).toBeUndefined();
  });
});
