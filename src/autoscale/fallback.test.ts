import { describe, expect, it } from "vitest";
import { evaluateFallback } from "./fallback.js";

describe("evaluateFallback", () => {
  it("counts failures, applies from the threshold on, resets on the first success", () => {
    const spec = { failureThreshold: 3, action: "Hold" as const };
    const passes = [true, true, true, true, false, true];
    let failures = 0;
    const seen: [number, boolean][] = [];
    for (const failed of passes) {
      const s = evaluateFallback(spec, failures, failed);
      failures = s.consecutiveFailures;
      seen.push([s.consecutiveFailures, s.active]);
    }
    expect(seen).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [4, true],
      [0, false],
      [1, false],
    ]);
  });

  it("carries the fixed units of action Fixed", () => {
    const s = evaluateFallback({ failureThreshold: 1, action: "Fixed", units: 30 }, 0, true);
    expect(s).toMatchObject({ active: true, action: "Fixed", fixedUnits: 30, threshold: 1 });
  });
});
