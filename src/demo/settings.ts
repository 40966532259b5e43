/** What the demo runs, where it writes and what stops it, and how the run went. */
import type { CapacityPolicy } from "../api/index.js";
import type { LiveSink } from "./live.js";
import type { DemoSummary, TimelineRow } from "./timeline.js";
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
}

/** One scale-out sent ahead of the measured need. */
export interface AnticipatedScaleOut {
  /** Virtual ms of the pass that sent it. */
  time: number;
  /** The rule that asked for the most (Trend, CensoredDemand, Headroom, Seasonal). */
  rule: string;
  from: { sku: string; units: number };
  to: { sku: string; units: number };
}
