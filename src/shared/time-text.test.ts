import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoDuration, parseRfc3339, parseTimeSpan } from "./time-text.js";

const AT = Date.UTC(2025, 5, 2, 11, 40, 0);

describe("parseRfc3339", () => {
  it.each<[string, number]>([
    ["2025-06-02T11:40:00Z", AT],
    ["2025-06-02T11:40:00.0000000Z", AT],
    ["2025-06-02T11:40:00+00:00", AT],
    ["2025-06-02T11:40:00-00:00", AT],
    ["2025-06-02t11:40:00z", AT],
    ["2025-06-02 11:40:00+00:00", AT],
    ["2025-06-02T13:40:00+02:00", AT],
    ["2025-06-02T06:10:00-05:30", AT],
    ["2025-06-03T01:40:00+14:00", AT],
    ["2025-06-02T11:40:00.123456+00:00", AT + 123],
    ["2025-06-02T11:40:00.5Z", AT + 500],
    ["2025-06-02T17:10:15+05:30:15", AT],
    ["2024-02-29T00:00:00Z", Date.UTC(2024, 1, 29)],
    ["0099-01-01T00:00:00Z", -59_042_995_200_000],
  ])("reads %s", (text, ms) => {
    expect(parseRfc3339(text)).toBe(ms);
  });

  it.each([
    "2025-06-02T11:40:00", // no offset: no instant
    "2025-06-02",
    "2025-02-29T00:00:00Z",
    "2025-06-31T00:00:00Z",
    "2025-13-01T00:00:00Z",
    "2025-06-02T24:00:00Z",
    "2025-06-02T11:60:00Z",
    "2025-06-02T11:40:60Z",
    "2025-06-02T11:40:00+24:00",
    "2025-06-02T11:40:00+0000",
    "2025-06-02T11:40Z",
    "June 2, 2025 11:40 UTC",
    "1748864400",
  ])("refuses %s", (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it("reads back every instant Date.prototype.toISOString writes, at any offset", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("0001-01-02T00:00:00Z"),
          max: new Date("9999-12-30T23:59:59Z"),
          noInvalidDate: true,
        }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        (date, offsetMinutes) => {
          const ms = date.getTime();
          expect(parseRfc3339(date.toISOString())).toBe(ms);
          const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
          const sign = offsetMinutes < 0 ? "-" : "+";
          const abs = Math.abs(offsetMinutes);
          const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
          expect(parseRfc3339(`${local}${offset}`)).toBe(ms);
        },
      ),
    );
  });
});

describe("parseTimeSpan", () => {
  it.each<[string, number]>([
    // Python str(timedelta)
    ["0:01:00", 60],
    ["0:05:00", 300],
    ["1:00:00", 3600],
    ["23:59:59", 86_399],
    ["1 day, 0:00:00", 86_400],
    ["2 days, 3:04:05", 2 * 86_400 + 3 * 3600 + 4 * 60 + 5],
    ["0:00:30.500000", 30.5],
    ["-1 day, 23:59:00", -60],
    ["365 days, 0:00:00", 365 * 86_400],
    // .NET TimeSpan ("c")
    ["00:01:00", 60],
    ["06:00:00", 21_600],
    ["1.00:00:00", 86_400],
    ["00:00:30.5000000", 30.5],
    ["-00:01:00", -60],
  ])("reads %s as %d s", (text, seconds) => {
    expect(parseTimeSpan(text)).toBe(seconds);
  });

  it.each([
    "PT1M",
    "1m",
    "0:1:00",
    "24:00:00",
    "0:60:00",
    "1 day 0:00:00",
    "1 days,0:00:00",
    "0:01:00.5",
    "",
  ])("refuses %j", (text) => {
    expect(parseTimeSpan(text)).toBeUndefined();
  });

  it("reads back every span Python's str(timedelta) prints", () => {
    /** Python 3's timedelta.__str__, for whole microseconds. */
    const pythonStr = (micros: number) => {
      const days = Math.floor(micros / 86_400e6);
      const rest = micros - days * 86_400e6;
      const s = Math.floor(rest / 1e6);
      const us = rest - s * 1e6;
      const clock = `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}${us ? `.${String(us).padStart(6, "0")}` : ""}`;
      return days === 0 ? clock : `${days} day${Math.abs(days) === 1 ? "" : "s"}, ${clock}`;
    };
    fc.assert(
      fc.property(fc.integer({ min: -30 * 86_400e6, max: 30 * 86_400e6 }), (micros) => {
        expect(parseTimeSpan(pythonStr(micros))).toBeCloseTo(micros / 1e6, 6);
      }),
    );
  });
});

describe("isoDuration", () => {
  it.each<[number, string]>([
    [60, "PT1M"],
    [300, "PT5M"],
    [3600, "PT1H"],
    [86_400, "P1D"],
    [90_061, "P1DT1H1M1S"],
    [45, "PT45S"],
  ])("writes %d s as %s", (seconds, text) => {
    expect(isoDuration(seconds)).toBe(text);
  });

  it.each([0, -60, 30.5, Number.NaN])("refuses %d", (seconds) => {
    expect(() => isoDuration(seconds)).toThrow(RangeError);
  });
});
