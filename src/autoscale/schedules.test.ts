import { describe, expect, it } from "vitest";
import { activeSince, evaluateSchedules } from "./schedules.js";

const T = (iso: string) => Date.parse(iso);
// Weekdays 08:00 Madrid for 600 minutes. On 2025-06-02 (Monday, CEST = UTC+2) that is 06:00Z–16:00Z.
const weekday = {
  name: "weekday",
  cron: "0 8 * * 1-5",
  timeZone: "Europe/Madrid",
  durationMinutes: 600,
  minUnits: 50,
};

describe("activeSince", () => {
  it.each([
    ["2025-06-02T05:59:59Z", false],
    ["2025-06-02T06:00:00Z", true], // the start is inside: [start, start + duration)
    ["2025-06-02T15:59:59Z", true],
    ["2025-06-02T16:00:00Z", false], // the end is outside
    ["2025-06-07T10:00:00Z", false], // Saturday
    ["2025-01-06T07:30:00Z", true], // winter (CET = UTC+1): 08:00 local is 07:00Z
    ["2025-01-06T06:30:00Z", false],
    ["2025-03-31T06:00:00Z", true], // the Monday after the spring DST change: 08:00 CEST = 06:00Z
  ])("weekday schedule at %s → active %s", (now, active) => {
    expect(activeSince(weekday.cron, weekday.timeZone, weekday.durationMinutes, T(now)) !== undefined).toBe(
      active,
    );
  });

  it("a run that started before the previous day can still be active", () => {
    const span = activeSince("0 22 * * *", "UTC", 180, T("2025-06-03T00:30:00Z"));
    expect(span && new Date(span.start).toISOString()).toBe("2025-06-02T22:00:00.000Z");
  });

  it.each([
    ["not a cron", "UTC"],
    ["0 8 * * *", "Mars/Olympus"],
  ])("throws RangeError for %s in %s", (cron, tz) => {
    expect(() => activeSince(cron, tz, 10, T("2025-06-02T12:00:00Z"))).toThrow(RangeError);
  });
});

describe("evaluateSchedules", () => {
  it("the highest active floor wins", () => {
    const s = evaluateSchedules(
      [weekday, { name: "launch", cron: "0 11 2 6 *", timeZone: "UTC", durationMinutes: 120, minUnits: 80 }],
      undefined,
      T("2025-06-02T12:00:00Z"),
    );
    expect(s.floorUnits).toBe(80);
    expect(s.floorSchedule).toBe("launch");
    expect(s.activeSchedules.map((a) => a.name)).toEqual(["weekday", "launch"]);
    expect(s.activeSchedules[0]?.endsAt).toBe("2025-06-02T16:00:00.000Z");
  });

  it("no active schedule, no floor", () => {
    expect(evaluateSchedules([weekday], undefined, T("2025-06-02T20:00:00Z")).floorUnits).toBeUndefined();
  });

  const night = { name: "night", cron: "0 1 * * *", timeZone: "UTC", durationMinutes: 240 };
  it.each<[string, (typeof night)[] | undefined, string, boolean]>([
    ["no windows: always", undefined, "2025-06-02T12:00:00Z", true],
    ["inside a window", [night], "2025-06-02T02:00:00Z", true],
    ["outside every window", [night], "2025-06-02T12:00:00Z", false],
    [
      "an unreadable window is never open",
      [{ ...night, timeZone: "Nowhere/Land" }],
      "2025-06-02T02:00:00Z",
      false,
    ],
  ])("scale-in %s", (_n, windows, now, allowed) => {
    const s = evaluateSchedules(undefined, windows, T(now));
    expect(s.scaleInAllowed).toBe(allowed);
  });

  it("reports unreadable entries", () => {
    const s = evaluateSchedules([{ ...weekday, cron: "99 * * * *" }], undefined, T("2025-06-02T12:00:00Z"));
    expect(s.invalid.map((i) => i.name)).toEqual(["weekday"]);
    expect(s.floorUnits).toBeUndefined();
  });
});
