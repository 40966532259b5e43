/**
 * The Pareto frontier of points that each cost something (`x`, e.g. USD) and do some harm (`y`,
 * e.g. refused connection-minutes; optionally a second harm `z`, e.g. clients disconnected by
 * scaling), all to be kept low. Pure. Without `z` the frontier is the usual two-axis one; with it,
 * a point must be at most as high on all three axes to dominate another.
 *
 * A point dominates another when it is at most as high on both axes and lower on at least one.
 * The frontier is the set of points no other point dominates: for each of them, nothing is as
 * cheap and as good with one of the two strictly better. Ties: two points with the same `x` and
 * `y` (within a relative {@link TIE_TOLERANCE}) do not dominate each other, so a point and its
 * copy are on the frontier or off it together; a point with the same cost as another and more
 * harm is dominated by it, and the same for the same harm at a higher cost.
 *
 * Cost: O(n²) comparisons — sweeps have tens of points, the simple rules' reference a thousand.
 */

/** Relative difference under which two values count as equal: 1e-9 (float noise of sums). */
export const TIE_TOLERANCE = 1e-9;

/** A point to place: its cost and its harm (both lower is better, both finite). */
export interface FrontierInput {
  x: number;
  y: number;
  /** A second harm (lower is better); absent counts as 0 on every point. */
  z?: number;
}

/** Where a point stands. */
export interface FrontierPlace {
  /** No other point dominates it. */
  onFrontier: boolean;
  /**
   * For a point off the frontier: the index of the frontier point that dominates it at the lowest
   * cost (then the lowest harm); undefined on the frontier.
   */
  dominatedBy: number | undefined;
}

function equal(a: number, b: number): boolean {
  return Math.abs(a - b) <= TIE_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}

/** `a ≤ b`, ties (within {@link TIE_TOLERANCE}) included. */
export function atMost(a: number, b: number): boolean {
  return a < b || equal(a, b);
}

/**
 * Whether the vector `a` dominates `b` (same length, every axis lower is better): at most as high
 * on every axis and lower on at least one, beyond ties.
 */
export function dominatesVector(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  let lower = false;
  for (let i = 0; i < a.length; i++) {
    const p = a[i] as number;
    const q = b[i] as number;
    if (equal(p, q)) continue;
    if (p > q) return false;
    lower = true;
  }
  return lower;
}

/** Whether `a` dominates `b`: at most as high on both axes, lower on at least one (beyond ties). */
export function dominates(a: FrontierInput, b: FrontierInput): boolean {
  return dominatesVector([a.x, a.y, a.z ?? 0], [b.x, b.y, b.z ?? 0]);
}

/**
 * Which of `vectors` no other dominates ({@link dominatesVector}), in their order: the Pareto set
 * over any number of axes. O(n² × axes).
 */
export function nonDominated(vectors: readonly ArrayLike<number>[]): boolean[] {
  return vectors.map((v) => !vectors.some((w) => dominatesVector(w, v)));
}

/**
 * The place of every point (same order as `points`): on the frontier or not, and which frontier
 * point dominates it.
 * @throws RangeError when a coordinate is not a finite number.
 */
export function placeOnFrontier(points: readonly FrontierInput[]): FrontierPlace[] {
  for (const [i, p] of points.entries()) {
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y) || !Number.isFinite(p.z ?? 0)) {
      throw new RangeError(`point ${i} is not finite: x ${p.x}, y ${p.y}, z ${p.z}`);
    }
  }
  const on = points.map((p) => !points.some((q) => dominates(q, p)));
  const front = points
    .map((p, i) => ({ p, i }))
    .filter(({ i }) => on[i])
    .sort((a, b) => a.p.x - b.p.x || a.p.y - b.p.y);
  return points.map((p, i) => ({
    onFrontier: on[i] as boolean,
    dominatedBy: on[i] ? undefined : front.find((f) => dominates(f.p, p))?.i,
  }));
}

/** The indices of the frontier points, by ascending cost (then harm): the frontier's line. */
export function frontierLine(points: readonly FrontierInput[], places: readonly FrontierPlace[]): number[] {
  return points
    .map((p, i) => ({ p, i }))
    .filter(({ i }) => places[i]?.onFrontier)
    .sort((a, b) => a.p.x - b.p.x || a.p.y - b.p.y)
    .map(({ i }) => i);
}

/** What the frontier offers instead of one point (indices into the points; undefined: nothing). */
export interface FrontierOffer {
  /** The cheapest frontier point with no more harm (`y` and `z`), when it costs less. */
  cheaper: number | undefined;
  /** The frontier point with the least `y` at no more cost and no more `z`, when its `y` is lower. */
  safer: number | undefined;
}

/**
 * For point `index` (the policy under test, say): the cheapest frontier point doing no more harm
 * and the least harmful one costing no more — the two ways to move onto the frontier. A point on
 * the frontier gets neither.
 * @throws RangeError when `index` is not a point.
 */
export function frontierOffer(
  points: readonly FrontierInput[],
  places: readonly FrontierPlace[],
  index: number,
): FrontierOffer {
  const p = points[index];
  if (!p) throw new RangeError(`no point ${index} among ${points.length}`);
  const le = atMost;
  const lt = (a: number, b: number) => a < b && !equal(a, b);
  let cheaper: number | undefined;
  let safer: number | undefined;
  for (const i of frontierLine(points, places)) {
    const q = points[i] as FrontierInput;
    if (!le(q.z ?? 0, p.z ?? 0)) continue;
    if (le(q.y, p.y) && lt(q.x, p.x) && (cheaper === undefined || q.x < (points[cheaper] as FrontierInput).x))
      cheaper = i;
    if (le(q.x, p.x) && lt(q.y, p.y) && (safer === undefined || q.y < (points[safer] as FrontierInput).y))
      safer = i;
  }
  return { cheaper, safer };
}
