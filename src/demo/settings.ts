/** What the demo runs, where it writes and what stops it, and how the run went. */
import type { CapacityPolicy } from "../api/index.js";
import type { SkuName } from "../capacity/index.js";
import type { DemoGroupSettings } from "./group.js";
import type { LiveSink } from "./live.js";
import type { DemoSummary, GroupTotals, TimelineRow } from "./timeline.js";
import type { TraceWindow } from "./trace-window.js";

/** What the demo runs. */
export interface DemoSettings {
  /** The validated policy; its namespace is where everything is created. */
  policy: CapacityPolicy;
  /** The trace window to replay and its label for titles. */
  window: TraceWindow;
  traceLabel: string;
  /** Client connections at the window's largest value. */
  peakConnections: number;
  /** Virtual ms per real ms. */
  speed: number;
  /** Virtual time an ARM scale takes, ms. */
  scaleDurationMs: number;
  /** Virtual time before a minute's metrics are complete, ms. */
  ingestionDelayMs: number;
  /** Directory for timeline.csv and chart.svg. */
  outDir: string;
  /** An existing cluster instead of the local control plane. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /** Operator warnings to `log`. */
  verbose?: boolean;
  /**
   * Run a real Prometheus for a policy's leading signal (default true); false leaves the signal
   * out of the policy (`--no-prometheus`).
   */
  prometheus?: boolean;
  /** Minutes of virtual time between status lines when nothing changes (default 30). */
  statusEveryMinutes?: number;
  /**
   * A geo-replica group instead of one instance (`--replicas`, `--failover`): the policy's target
   * is its primary; each member gets its share of the demand and a policy of its own (`group.ts`).
   */
  group?: DemoGroupSettings | undefined;
}

/** Where the demo writes and what stops it. */
export interface DemoIo {
  /** The live view. */
  live: LiveSink;
  /** Operator log lines (only with `verbose`). */
  log: (text: string) => void;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/** How the run went. */
export interface DemoResult {
  /** False when the run was interrupted before the traffic started (nothing to summarize). */
  started: boolean;
  /** The signal aborted the run before the window had passed. */
  interrupted: boolean;
  summary: DemoSummary;
  rows: TimelineRow[];
  files: { timeline: string; chart: string } | undefined;
  /** Real seconds of the traffic replay (without the set-up). */
  replaySeconds: number;
  /** Real seconds in all. */
  wallSeconds: number;
  operator: { passes: number; failedPasses: number; meanPassMs: number; meanPassIntervalSeconds: number };
  /** spec.anticipation's mode, and the scale-outs it drove. */
  anticipation: { mode: string; scaleOuts: AnticipatedScaleOut[] };
  /**
   * The policy's leading signal: the Prometheus the demo ran for it and the operator's queries to
   * it, or why it was left out. Absent when the policy has none.
   */
  leading?: {
    prometheus?: { url: string; version: string; scrapeIntervalMs: number };
    removed?: string;
    queries: { ok: number; failed: number };
  };
  azureCalls: { armReads: number; armWrites: number; getBatch: number };
  /** Where it ran. */
  cluster: { local: boolean; kubeconfig: string; namespace: string };
  /** With `--replicas`: each member's figures, the group's, and the failover's. */
  group?: GroupResult;
}

/** A member's run. */
export interface MemberResult {
  name: string;
  role: "Primary" | "Replica";
  resourceId: string;
  location: string;
  share: number;
  /** Its CapacityPolicy's name. */
  policy: string;
  summary: DemoSummary;
  /** Minutes it did not serve (the failover). */
  minutesNotServing: number;
  /**
   * Its first scale-out sent while the failed member was down (from the failover to its restore),
   * whole minutes after the failover; absent for the failed member and a survivor that sent none.
   */
  firstScaleOutMinutes?: number;
  /**
   * A survivor's size in the minute the member failed (its timeline's row then), and its
   * policy's `units.max`: what a survivor without a scale-out already had.
   */
  atFailover?: { sku: SkuName; units: number; maxUnits: number };
}

/** The group's run: its members, the whole, the failover. */
export interface GroupResult {
  members: MemberResult[];
  /** False: the members' policies ran without the Failover anticipation rule (`--no-failover-rule`). */
  failoverRule: boolean;
  /**
   * The group as a whole: unit-hours and refused connection-minutes summed; a minute refusing or
   * above the load target counted once whichever members did; scale operations summed.
   */
  total: GroupTotals;
  failover?: {
    member: string;
    cause: string;
    /** Virtual ms it stopped serving and was restored (absent when the run ended first). */
    startMs: number;
    restoredMs?: number;
    durationMs: number;
    /** Its clients at the failure, as the emulator moved them. */
    connections: number;
    /** The minutes [start, start + duration) within the run: refusing (any member), refused connection-minutes. */
    minutes: number;
    minutesRefused: number;
    refusedConnectionMinutes: number;
  };
}

/** One scale-out sent ahead of the measured need. */
export interface AnticipatedScaleOut {
  /** Virtual ms of the pass that sent it. */
  time: number;
  /** The rule that asked for the most (Trend, CensoredDemand, Headroom, Seasonal, Failover). */
  rule: string;
  /** The member whose policy sent it (`--replicas`). */
  member?: string;
  from: { sku: string; units: number };
  to: { sku: string; units: number };
}
