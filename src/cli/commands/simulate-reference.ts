/**
 * What `simulate` prints and writes of the simple rules' reference (src/simulate/reference.ts and
 * docs/simulate.md, "Reference"): the lines that place the policy against the best simple causal
 * rules, and the `reference` object of the JSON output.
 */
import type { Reference, ReferencePoint } from "../../simulate/reference.js";
import { describeRule } from "../../simulate/rules.js";
import { formatNumber } from "../output.js";

const whole = (v: number) => formatNumber(Math.round(v));
const tenth = (v: number) => formatNumber(Math.round(v * 10) / 10);

/** `r0293 (demand × 1.15 + 1,000, …)`. */
const named = (p: ReferencePoint) => `${p.name} (${describeRule(p.rule)})`;

/** `907 minutes (7,476,812 connection-minutes; 1,620 minutes above the load target)`. */
const refusals = (p: {
  refusedMinutes: number;
  refusedConnectionMinutes: number;
  minutesAboveTarget?: number;
}) =>
  `${whole(p.refusedMinutes)} minutes (${whole(p.refusedConnectionMinutes)} connection-minutes${
    p.minutesAboveTarget === undefined ? "" : `; ${whole(p.minutesAboveTarget)} minutes above the load target`
  })`;

/** `3.2 % less` / `4.1 % more` than `base`. */
function relative(value: number, base: number): string {
  if (!(base > 0)) return "";
  const change = Math.round((value / base - 1) * 1000) / 10;
  return change === 0
    ? ", the same"
    : `, ${formatNumber(Math.abs(change))} % ${change < 0 ? "less" : "more"}`;
}

/** The line of the best rule at the policy's unit-hours and disconnections (or why there is none). */
function atCostLine(r: Reference, by: Map<string, ReferencePoint>): string {
  const p = r.policy;
  const at = `at your unit-hours (${tenth(p.unitHours)}) and disconnections (${whole(p.clientsDisconnected)})`;
  const best = p.atPolicyCost ? by.get(p.atPolicyCost) : undefined;
  if (best) {
    return `${at}, the best simple rule refuses ${refusals(best)}; you refuse ${refusals(p)} — ${named(best)}`;
  }
  const within = p.cheapestWithinDisconnections ? by.get(p.cheapestWithinDisconnections) : undefined;
  if (!within) return `${at}: no simple rule disconnects as few clients as yours`;
  return `${at}: no simple rule is that cheap with no more disconnections; the cheapest that disconnects no more takes ${tenth(within.unitHours)} unit-hours and refuses ${refusals(within)} — ${named(within)}`;
}

/** The reference section of the text output. */
export function renderReference(r: Reference, seconds: number): string {
  const by = new Map(r.points.map((p) => [p.name, p]));
  const p = r.policy;
  const head = `reference: ${formatNumber(r.configurations)} simple causal rules on the same engine (demand seen ${r.lagMinutes} min late, one scale at a time of ${r.scaleMinutes} min, connections capped at the quota) in ${seconds.toFixed(1)} s; ${formatNumber(r.points.length)} not dominated on refused minutes, refused connection-minutes, unit-hours and clients disconnected (--no-reference to skip)`;
  const lines = [atCostLine(r, by)];
  const noWorse = p.cheapestNoWorse ? by.get(p.cheapestNoWorse) : undefined;
  lines.push(
    noWorse
      ? `the cheapest simple rule refusing no more minutes and disconnecting no more clients takes ${tenth(noWorse.unitHours)} unit-hours${relative(noWorse.unitHours, p.unitHours)} — ${named(noWorse)}`
      : "no simple rule refuses as few minutes with no more disconnections",
  );
  const loose = p.atPolicyCostAnyDisconnections ? by.get(p.atPolicyCostAnyDisconnections) : undefined;
  if (loose) {
    lines.push(
      `on refusals and cost alone, at your unit-hours the best refuses ${refusals(loose)} and disconnects ${whole(loose.clientsDisconnected)} clients — ${named(loose)}`,
    );
  }
  lines.push(
    p.dominated
      ? "policy: dominated by a simple rule (no worse on all four, better on one)"
      : "policy: no simple rule is at least as good on all four",
  );
  return `${head}\n${lines.map((l) => `  ${l}`).join("\n")}\n`;
}

/** The `reference` object of the JSON output. */
export function referenceJson(r: Reference, seconds: number) {
  return {
    axes: ["refusedMinutes", "refusedConnectionMinutes", "unitHours", "clientsDisconnected"],
    grid: r.grid,
    configurations: r.configurations,
    lagMinutes: r.lagMinutes,
    scaleMinutes: r.scaleMinutes,
    policy: r.policy,
    points: r.points,
    runTimeSeconds: Math.round(seconds * 1000) / 1000,
  };
}
