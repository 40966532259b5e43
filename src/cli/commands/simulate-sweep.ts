/**
 * What `simulate --sweep` prints and writes besides the comparison: the frontier table (text), the
 * `sweep` object of the JSON output, and the title of `frontier.svg` (see src/simulate/sweep.ts
 * and docs/simulate.md, "Frontier").
 */
import { shortSettings } from "../../simulate/frontier-chart.js";
import { HIGH_LOAD_PERCENT } from "../../simulate/metrics.js";
import type { Sweep, SweepPoint } from "../../simulate/sweep.js";
import { formatNumber, formatTable } from "../output.js";

/** `metrics.*.targetPercent 50, 60, 70 × units.min 2, 5, 10`: the grid as people read it. */
function describeGrid(s: Sweep): string {
  return s.plan.knobs.map((k) => `${k.name} ${k.values.join(", ")}`).join(" × ");
}

function place(p: SweepPoint): string {
  if (p.role === "reference") return "reference";
  return p.onFrontier ? "frontier" : `dominated by ${p.dominatedBy ?? "?"}`;
}

const percentLess = (a: number, b: number) =>
  b > 0 ? `${formatNumber(Math.round((1 - a / b) * 1000) / 10)} %` : "—";

/** The line that places the policy under test. */
function policyLine(s: Sweep): string {
  const by = new Map(s.points.map((p) => [p.name, p]));
  const policy = by.get("policy") as SweepPoint;
  if (s.policy.onFrontier) {
    return "policy: on the frontier — no variant costs less, refuses less or disconnects fewer clients without doing worse on another";
  }
  const parts: string[] = [];
  const cheaper = s.policy.cheaper ? by.get(s.policy.cheaper) : undefined;
  if (cheaper) {
    parts.push(
      `${cheaper.name} (${shortSettings(cheaper.settings)}) refuses and disconnects no more for ${percentLess(cheaper.costUsd, policy.costUsd)} less cost`,
    );
  }
  const safer = s.policy.safer ? by.get(s.policy.safer) : undefined;
  if (safer) {
    parts.push(
      `${safer.name} (${shortSettings(safer.settings)}) refuses ${percentLess(safer.refusedConnectionMinutes, policy.refusedConnectionMinutes)} fewer connection-minutes for no more cost or disconnections`,
    );
  }
  return `policy: off the frontier (dominated by ${s.policy.dominatedBy ?? "?"}): ${parts.join("; ")}`;
}

/** The frontier section of the text output: notes, the table by ascending cost, the policy's place. */
export function renderSweep(s: Sweep, loadTargetPercent: number): string {
  const knobs = s.plan.knobs.map((k) => k.name);
  const rows = [...s.points]
    .sort((a, b) => a.costUsd - b.costUsd || a.refusedConnectionMinutes - b.refusedConnectionMinutes)
    .map((p) => [
      p.name,
      ...knobs.map((k) => (p.settings[k] === undefined ? "" : String(p.settings[k]))),
      Math.round(p.costUsd * 100) / 100,
      Math.round(p.metrics.totalUnitHours * 10) / 10,
      Math.round(p.refusedConnectionMinutes),
      p.metrics.minutesRefused,
      p.metrics.minutesAboveTarget,
      p.metrics.minutesAboveHighLoad,
      p.metrics.scaleOperations,
      Math.round(p.clientsDisconnected),
      place(p),
    ]);
  const table = formatTable(
    [
      "POINT",
      ...knobs,
      "COST USD",
      "UNIT-HOURS",
      "REFUSED CONN-MIN",
      "MIN REFUSED",
      `MIN > ${loadTargetPercent}%`,
      `MIN > ${HIGH_LOAD_PERCENT}%`,
      "SCALE OPS",
      "DISCONNECTED",
      "FRONTIER",
    ],
    rows,
  );
  const variants = s.points.filter((p) => p.role === "variant").length;
  const notes: string[] = [];
  if (s.plan.sampled) {
    notes.push(
      `note: the grid has ${formatNumber(s.plan.candidates)} distinct variants; ${variants} ran, spread evenly over it (--max-trials to run more)`,
    );
  }
  if (s.plan.skipped.length > 0) {
    const first = s.plan.skipped[0];
    notes.push(
      `note: ${s.plan.skipped.length} combination(s) skipped as invalid policies, e.g. ${shortSettings(first?.settings ?? {})}: ${first?.reason}`,
    );
  }
  const head = `frontier: cost against refused connection-minutes and clients disconnected by scaling — the policy and ${variants} variants (${describeGrid(s) || "no knob applies"}); the Pareto frontier is computed over them, the references are shown beside it`;
  return `${[head, ...notes].join("\n")}\n\n${table}\n${policyLine(s)}\n`;
}

/** The `sweep` object of the JSON output. */
export function sweepJson(s: Sweep) {
  return {
    axes: { x: "costUsd", y: "refusedConnectionMinutes", z: "clientsDisconnected" },
    knobs: s.plan.knobs,
    policySettings: s.plan.policySettings,
    combinations: s.plan.combinations,
    candidates: s.plan.candidates,
    sampled: s.plan.sampled,
    skipped: s.plan.skipped,
    policy: s.policy,
    points: s.points,
  };
}
