/**
 * What holds a saturated instance right after a scale-out: the window's buckets were all served
 * by a smaller size (or overlap the change, read at the smaller one) and the connection quota was
 * full in some of them. They only say the demand was above that smaller size's quota — never
 * whether the current, larger size covers it — so a recommendation below the current size made
 * from them is not a reason the decision gives: it holds the size until the first bucket at the
 * current size is read, and says so (`AwaitingNewSize`) instead of naming the scale-down window.
 * Pure.
 */
import { CONNECTIONS_PER_UNIT } from "../../capacity/skus.js";
import { fmt } from "../format.js";
import { MINUTE_MS } from "../samples.js";
import { censoredAt } from "../signals/common.js";
import type { DemandSeries } from "../signals/types.js";
import type { ObservedWindow } from "./window.js";

/** The quota was full at a smaller size, and no bucket at the current size is read yet. */
export interface UnmeasuredSize {
  /** The largest unit count that served the window's buckets, units (below the current size). */
  servedUnits: number;
  /** Start of the newest censored bucket, ms. */
  censoredMs: number;
  /** When the first bucket at the current size is complete and read, ms (from the last change). */
  firstReadMs: number;
}

/**
 * {@link UnmeasuredSize} of this pass, or undefined: when the connections series has no censored
 * bucket, or some bucket of the window was served at the current units or more. The first read
 * comes the ingestion delay the decision reads with (`observed.delaySeconds`) after that bucket.
 */
export function unmeasuredSize(
  demand: readonly DemandSeries[],
  observed: ObservedWindow,
  currentUnits: number,
): UnmeasuredSize | undefined {
  const connections = demand.find((d) => d.signal === "connections");
  const points = connections?.points ?? [];
  const censored = points.filter(censoredAt).at(-1);
  if (!censored) return undefined;
  const { timeline } = observed;
  const served = Math.max(...points.map((p) => timeline.unitsAt(p.start)));
  if (!(served < currentUnits)) return undefined;
  // The first bucket at the current size starts at the completion of the last change.
  const completed = Math.max(
    ...points.flatMap((p) => timeline.changesAt(p.start).map((c) => c.completedMs)),
    observed.lastScaleMs,
  );
  if (!Number.isFinite(completed)) return undefined;
  const firstBucket = Math.ceil(completed / MINUTE_MS) * MINUTE_MS;
  return {
    servedUnits: served,
    censoredMs: censored.start,
    firstReadMs: firstBucket + MINUTE_MS + observed.delaySeconds * 1000,
  };
}

/** The message of an {@link UnmeasuredSize} hold at `currentUnits`. */
export function unmeasuredMessage(u: UnmeasuredSize, currentUnits: number): string {
  const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
  return `the connection quota was full at ${fmt(u.servedUnits)} units (bucket ${hhmm(u.censoredMs)} UTC) and no bucket at ${fmt(currentUnits)} units is read yet: the metrics only say the demand is above ${fmt(u.servedUnits * CONNECTIONS_PER_UNIT)} connections; held at ${fmt(currentUnits)} units until the first is read, at about ${hhmm(u.firstReadMs)} UTC`;
}
