import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  dominates,
  dominatesVector,
  frontierLine,
  frontierOffer,
  nonDominated,
  placeOnFrontier,
} from "./frontier.js";

const pt = (x: number, y: number) => ({ x, y });

describe("Pareto frontier of cost (x) and harm (y)", () => {
  it("puts a point dominated on both axes off the frontier, and names a frontier point that dominates it", () => {
    //   0: cheap, harmful   1: dear, harmless   2: middle   3: worse than 2 on both   4: worse than 0 and 2
    const points = [pt(100, 50), pt(400, 0), pt(200, 10), pt(250, 20), pt(300, 60)];
    const places = placeOnFrontier(points);
    expect(places.map((p) => p.onFrontier)).toEqual([true, true, true, false, false]);
    expect(places[3]?.dominatedBy).toBe(2);
    // Dominated by 0 (cheaper, less harm) and by 2: the cheapest dominating frontier point.
    expect(places[4]?.dominatedBy).toBe(0);
    expect(places[0]?.dominatedBy).toBeUndefined();
    expect(frontierLine(points, places)).toEqual([0, 2, 1]);
  });

  it("handles ties: equal points do not dominate each other; equal cost with more harm is dominated", () => {
    const points = [pt(100, 10), pt(100, 10), pt(100, 12), pt(90, 10 + 1e-12), pt(120, 10)];
    const places = placeOnFrontier(points);
    // 3 costs less at the same harm (within float noise): it dominates 0, 1, 2 and 4.
    expect(places.map((p) => p.onFrontier)).toEqual([false, false, false, true, false]);
    expect(placeOnFrontier([pt(5, 5), pt(5, 5)]).map((p) => p.onFrontier)).toEqual([true, true]);
    expect(dominates(pt(100, 10), pt(100, 10))).toBe(false);
    expect(dominates(pt(100, 10), pt(100, 11))).toBe(true);
    expect(dominates(pt(100, 11), pt(100, 10))).toBe(false);
    // Same harm, one cheaper: the dearer one is off.
    expect(placeOnFrontier([pt(1, 0), pt(2, 0)]).map((p) => p.onFrontier)).toEqual([true, false]);
  });

  it("flags where the policy point stands and what the frontier offers instead of it", () => {
    // The policy (index 0) refuses 30 at 300; the frontier has 250 → 30 (cheaper, as safe) and
    // 300 → 5 (as dear, safer), and 260 → 20 in between.
    const points = [pt(300, 30), pt(250, 30), pt(300, 5), pt(260, 20), pt(500, 0)];
    const places = placeOnFrontier(points);
    expect(places[0]).toEqual({ onFrontier: false, dominatedBy: 1 });
    expect(frontierOffer(points, places, 0)).toEqual({ cheaper: 1, safer: 2 });
    // On the frontier: nothing to offer.
    expect(frontierOffer(points, places, 3)).toEqual({ cheaper: undefined, safer: undefined });
    expect(() => frontierOffer(points, places, 9)).toThrow(RangeError);
  });

  it("refuses a coordinate that is not finite", () => {
    expect(() => placeOnFrontier([pt(1, Number.NaN)])).toThrow("point 0 is not finite");
  });

  it("property: no frontier point dominates another, and every other point is dominated by a frontier point", () => {
    const coord = fc.integer({ min: 0, max: 20 });
    fc.assert(
      fc.property(fc.array(fc.record({ x: coord, y: coord }), { minLength: 1, maxLength: 30 }), (points) => {
        const places = placeOnFrontier(points);
        const front = points.filter((_, i) => places[i]?.onFrontier);
        expect(front.length).toBeGreaterThan(0);
        for (const a of front) for (const b of front) expect(dominates(a, b)).toBe(false);
        for (const [i, p] of points.entries()) {
          const place = places[i];
          if (place?.onFrontier) continue;
          const by = points[place?.dominatedBy ?? -1];
          expect(by && places[place?.dominatedBy ?? -1]?.onFrontier).toBe(true);
          expect(by && dominates(by, p)).toBe(true);
        }
      }),
    );
  });

  it("with a second harm (z), a point cheaper and safer but disconnecting more stays beside it", () => {
    const p3 = (x: number, y: number, z: number) => ({ x, y, z });
    // 0: the policy; 1: cheaper and refuses less but disconnects four times as many; 2: dominates 0.
    const points = [p3(300, 30, 100), p3(250, 20, 400), p3(290, 30, 100), p3(300, 30, 120)];
    const places = placeOnFrontier(points);
    expect(places.map((p) => p.onFrontier)).toEqual([false, true, true, false]);
    expect(places[0]?.dominatedBy).toBe(2);
    expect(places[3]?.dominatedBy).toBe(2);
    expect(dominates(points[1] as never, points[0] as never)).toBe(false);
    // 1 costs less, but disconnects more: only 2 is offered.
    expect(frontierOffer(points, places, 0)).toEqual({ cheaper: 2, safer: undefined });
  });

  it("over four axes: keeps what nothing beats on every axis, ties together", () => {
    // refused minutes, refused connection-minutes, unit-hours, disconnected
    const v = [
      [900, 6e6, 4000, 2e5], // 0: beaten by 2 on every axis
      [700, 3e6, 4000, 8e5], // 1: fewer refusals, more disconnections: kept
      [850, 5e6, 3900, 1e5], // 2: kept
      [850, 5e6, 3900, 1e5], // 3: a copy of 2: kept with it
      [850, 5e6, 3900, 1e5 + 1], // 4: one client more than 2: beaten
    ];
    expect(nonDominated(v)).toEqual([false, true, true, true, false]);
    expect(dominatesVector(v[2] as number[], v[0] as number[])).toBe(true);
    expect(dominatesVector(v[2] as number[], v[3] as number[])).toBe(false);
    expect(dominatesVector([1, 2, 3, 4], [1, 2, 3, 4 * (1 + 1e-12)])).toBe(false);
  });
});
