/**
 * `demo --replicas` and `--failover`: the replica group the demo creates and its failover, read
 * with `simulate`'s parsers (simulate-replicas.ts: the same syntax, `eastus=0.5,westus=0.3,…` the
 * primary first, `westus@peak` or `westus@<time>` with `--failover-duration`), plus what the
 * emulator's failover action takes: `--failover-cause` and Azure's limit of 8 replicas per
 * primary. The peak of `member@peak` is the peak minute of the window's demand, as `simulate`
 * finds it in its slice.
 */
import type { CapacityPolicy } from "../../api/index.js";
import { type DemoGroupSettings, demoMembers, MINUTE_MS, type TraceWindow } from "../../demo/index.js";
import { OUTAGE_CAUSES, type OutageCause } from "../../emulator/state.js";
import { demandFunction } from "../../traffic/index.js";
import { UsageError } from "../errors.js";
import { parseFailover, parseReplicas } from "./simulate-replicas.js";

/** The flags of a replica group. */
export interface DemoGroupFlags {
  replicas?: string | undefined;
  failover?: string | undefined;
  failoverDuration: string;
  failoverCause: string;
  /** False with `--no-failover-rule`. */
  failoverRule?: boolean | undefined;
}

/** `--failover-cause`: what ARM shows of the failed member. @throws UsageError for another value. */
export function parseFailoverCause(text: string): OutageCause {
  if ((OUTAGE_CAUSES as readonly string[]).includes(text)) return text as OutageCause;
  throw new UsageError(`--failover-cause must be one of ${OUTAGE_CAUSES.join(", ")}, got "${text}"`);
}

/** The window's demand per minute (connections at `peakConnections`), for the peak of `member@peak`. */
function windowDemand(window: TraceWindow, peakConnections: number): Float64Array {
  const fn = demandFunction(
    { kind: "trace", trace: window.trace, peakConnections, startAt: new Date(window.replayStartMs) },
    new Date(window.startMs),
  );
  const minutes = Math.round(window.durationMs / MINUTE_MS);
  const demand = new Float64Array(minutes);
  for (let m = 0; m < minutes; m++) demand[m] = fn(new Date(window.startMs + m * MINUTE_MS));
  return demand;
}

/**
 * The group of `--replicas` (the policy's target its primary) and the failover of `--failover`;
 * undefined without `--replicas`.
 * @throws UsageError for a bad flag, `--failover` without `--replicas`, more than
 * `MAX_MEMBERS` (simulate-replicas.ts) members, or a policy that cannot have replicas (a replica as its
 * target, a SKU other than Premium).
 */
export function readDemoGroup(
  flags: DemoGroupFlags,
  policy: CapacityPolicy,
  window: TraceWindow,
  peakConnections: number,
): DemoGroupSettings | undefined {
  if (flags.replicas === undefined) {
    if (flags.failover !== undefined)
      throw new UsageError(
        "--failover goes with --replicas (e.g. --replicas eastus=0.5,westus=0.5 --failover westus@peak)",
      );
    if (flags.failoverRule === false) throw new UsageError("--no-failover-rule goes with --replicas");
    return undefined;
  }
  const members = parseReplicas(flags.replicas);
  try {
    demoMembers(policy, members);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`--replicas: ${err.message}`);
    throw err;
  }
  const rule = flags.failoverRule === false ? { failoverRule: false } : {};
  if (flags.failover === undefined) return { members, ...rule };
  const cause = parseFailoverCause(flags.failoverCause);
  const plan = parseFailover(flags.failover, flags.failoverDuration, members, {
    startMs: window.startMs,
    demand: windowDemand(window, peakConnections),
  });
  return { members, failover: { ...plan, cause }, ...rule };
}
