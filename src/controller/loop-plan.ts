/**
 * Where each policy is in the operator's loop, and which policies a tick starts a poll cycle for.
 *
 * One record per policy. Its phase says what holds it:
 *
 * - `waiting`: for its poll time (`dueAt`) — new, changed, on the interval's grid, or sooner when
 *   its last pass asked for that (an ARM update in flight);
 * - `reading`: a poll cycle reads Azure for it;
 * - `leading`: its Azure reading is in, its leading signal's read (Prometheus) is not;
 * - `queued`: handed to the work queue, waiting for a worker;
 * - `passing`: its reconcile pass runs;
 * - `backingOff`: its last pass failed; due again at `dueAt` (the queue's exponential backoff).
 *
 * `dueAt` is kept in every phase: a change seen while a policy is read or passed moves it, and the
 * end of the cycle or pass sets it again (a change seen meanwhile is read at the next poll time;
 * an ownership change sets `repoll`, so the policy is due again right after its pass).
 *
 * {@link planTick} is pure: given the records and the time, it returns the policies due now and,
 * for every other one, why it is skipped.
 */

/** The phases of a policy in the loop (see the module comment). */
export type LoopPhase = "waiting" | "reading" | "leading" | "queued" | "passing" | "backingOff";

/** One policy's place in the loop. */
export interface LoopRecord<Reading = unknown> {
  /** Work-queue key, `namespace/name`. */
  readonly key: string;
  phase: LoopPhase;
  /** When it is due to be polled, ms since the epoch. */
  dueAt: number;
  /** The reading its next pass takes, once handed to the queue (absent for a policy Azure is not read for). */
  reading?: Reading | undefined;
  /** Its ownership verdict changed after its cycle took it: due again right after its pass. */
  repoll: boolean;
}

/** Why a tick holds every policy back; absent: the loop acts. */
export type LoopHold =
  /** This replica is not the leader (or stops). */
  | "notLeading"
  /** A young poll cycle has handed no policy over yet: policies due meanwhile wait to share the next one. */
  | "gathering";

/** Why a tick skips one policy. */
export type SkipReason =
  | { reason: "held"; by: LoopHold }
  | { reason: "notDue"; dueAt: number }
  | { reason: "backingOff"; dueAt: number }
  /** A cycle, its leading signal's read, the queue (with its reading) or a pass holds it. */
  | { reason: "reading" | "leading" | "queued" | "passing" };

/** What one tick does: the policies a new poll cycle reads, and why each other one waits. */
export interface TickPlan {
  /** Keys due now, in the records' order. */
  due: string[];
  skipped: { key: string; skip: SkipReason }[];
}

/** Why `r` is skipped at `now`, or undefined when it is due. */
function skipOf(r: Readonly<LoopRecord>, now: number): SkipReason | undefined {
  switch (r.phase) {
    case "reading":
    case "leading":
    case "passing":
      return { reason: r.phase };
    case "queued":
      // Queued without a reading (Azure is not read for it): only its poll time holds it.
      if (r.reading !== undefined) return { reason: "queued" };
      break;
    case "backingOff":
      if (r.dueAt > now) return { reason: "backingOff", dueAt: r.dueAt };
      break;
    case "waiting":
      break;
  }
  return r.dueAt > now ? { reason: "notDue", dueAt: r.dueAt } : undefined;
}

/**
 * The tick at `now` (ms since the epoch) over `records`: every record is due or skipped, with its
 * reason. With a `hold`, nothing is due.
 */
export function planTick(
  records: Iterable<Readonly<LoopRecord>>,
  now: number,
  hold?: LoopHold | undefined,
): TickPlan {
  const plan: TickPlan = { due: [], skipped: [] };
  for (const r of records) {
    const skip: SkipReason | undefined = hold ? { reason: "held", by: hold } : skipOf(r, now);
    if (skip) plan.skipped.push({ key: r.key, skip });
    else plan.due.push(r.key);
  }
  return plan;
}
