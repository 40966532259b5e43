/** The demo's closing summary, as text and as JSON. Pure. */
import type { DemoResult, MemberResult } from "./settings.js";
import type { CapacityChange, DemoSummary } from "./timeline.js";

const n = (v: number) => v.toLocaleString("en-US", { maximumFractionDigits: 1 });
const hhmm = (iso: string) => iso.slice(11, 16);

/** `1 min 58 s`, `42 s`. */
function formatSeconds(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

function step(c: CapacityChange): string {
  return `${hhmm(c.time)} (${c.from.sku} × ${c.from.units} → ${c.to.sku} × ${c.to.units})`;
}

/** The P1 → P2 line: when the step happened and when it came back. */
function p2Line(s: DemoSummary): string {
  if (!s.p1ToP2) return "not reached (the peak stayed within Premium_P1's 100 units)";
  const back = s.p2ToP1 ? `; back to Premium_P1 at ${step(s.p2ToP1)}` : "; still on Premium_P2 at the end";
  return `up at ${step(s.p1ToP2)}${back}; ${n(s.p2Minutes)} min on Premium_P2`;
}

/** The anticipation line: how many scale-outs it sent ahead of the measured need, by rule, and the first. */
function anticipationLine(a: DemoResult["anticipation"]): string {
  if (a.mode === "Off") return "Off (reactive only)";
  const first = a.scaleOuts[0];
  if (!first) return `${a.mode}: no scale-out ahead of the measured need`;
  const byRule = new Map<string, number>();
  for (const x of a.scaleOuts) byRule.set(x.rule, (byRule.get(x.rule) ?? 0) + 1);
  const rules = [...byRule].map(([rule, count]) => `${rule} ${count}`).join(", ");
  const at = new Date(first.time).toISOString();
  return `${a.mode}: ${a.scaleOuts.length} scale-out(s) ahead of the measured need (${rules}); first at ${hhmm(at)} (${first.from.sku} × ${first.from.units} → ${first.to.sku} × ${first.to.units}, ${first.rule})`;
}

/** The leading-signal line: its Prometheus and queries, and the scale-outs it drove. */
function leadingLine(l: NonNullable<DemoResult["leading"]>, a: DemoResult["anticipation"]): string {
  if (!l.prometheus) return l.removed ?? "left out";
  const drove = a.scaleOuts.filter((x) => x.rule === "LeadingSignal");
  const first = drove[0];
  return (
    `Prometheus ${l.prometheus.version}, ${n(l.queries.ok)} queries answered, ${n(l.queries.failed)} failed; ` +
    (first
      ? `drove ${drove.length} scale-out(s), first at ${hhmm(new Date(first.time).toISOString())} (${first.from.sku} × ${first.from.units} → ${first.to.sku} × ${first.to.units})`
      : "drove no scale-out")
  );
}

const pct = (share: number) => `${n(Math.round(share * 1000) / 10)} %`;

/** A replica group's lines: each member, the group, and the failover. */
function groupRows(g: NonNullable<DemoResult["group"]>): [string, string][] {
  const rows: [string, string][] = g.members.map((m) => {
    const s = m.summary;
    const refusing =
      s.minutesRefused === 0
        ? "0 minutes refusing"
        : `${s.minutesRefused} minutes refusing (${n(s.refusedConnectionMinutes)} connection-minutes)`;
    const down = m.minutesNotServing > 0 ? `, ${m.minutesNotServing} min not serving` : "";
    const first = firstScaleOutText(g, m);
    return [
      `${m.name} (${m.role === "Primary" ? "primary" : "replica"}, ${pct(m.share)})`,
      `${s.scaleOperations.total} scale operations (${s.scaleOperations.out} out, ${s.scaleOperations.in} in), ` +
        `${n(s.totalUnitHours)} unit-hours, units ${s.peakUnits > 0 ? `up to ${s.peakUnits}` : "—"}, ` +
        `peak ${n(s.peakConnections)} connections, ${refusing}${down}${first}`,
    ];
  });
  const t = g.total;
  rows.push([
    "group",
    `${t.scaleOperations.total} scale operations, ${n(t.unitHours)} unit-hours, ${t.minutesRefused} minutes refusing ` +
      `(${n(t.refusedConnectionMinutes)} connection-minutes, at most ${n(t.peakRefused)} in a minute), peak demand ${n(t.peakDemand)} connections`,
  ]);
  if (g.failover) rows.push(["failover", failoverText(g.failover)]);
  return rows;
}

/**
 * `, first scale-out +N min after the failover` on a survivor's line (`none` when it sent none
 * while the member was down, with the size it already had then: `none (Premium_P2 300 at the
 * failure, its units.max)`); nothing on the failed member's line or without a failover.
 */
function firstScaleOutText(g: NonNullable<DemoResult["group"]>, m: MemberResult): string {
  if (!g.failover || m.name === g.failover.member) return "";
  const had = m.atFailover
    ? ` (${m.atFailover.sku} ${n(m.atFailover.units)} at the failure${m.atFailover.units >= m.atFailover.maxUnits ? ", its units.max" : ""})`
    : "";
  const at = m.firstScaleOutMinutes === undefined ? `none${had}` : `+${n(m.firstScaleOutMinutes)} min`;
  return `, first scale-out while ${g.failover.member} was down: ${at}`;
}

/**
 * The failover line: what happened to the member's clients, per cause — stopped or an outage
 * disconnects them all and they reconnect to the others; a drain (`endpointDisabled`)
 * disconnects no one: new connections go to the others and its clients move as their
 * connections end — then the group's refusals in its minutes.
 */
export function failoverText(f: NonNullable<NonNullable<DemoResult["group"]>["failover"]>): string {
  const at = hhmm(new Date(f.startMs).toISOString());
  const back =
    f.restoredMs !== undefined
      ? `restored at ${hhmm(new Date(f.restoredMs).toISOString())}`
      : "not restored before the end";
  const what =
    f.cause === "endpointDisabled"
      ? `${f.member} drained from ${at} (endpointDisabled), ${back}: new connections went to the others, its ${n(f.connections)} clients moved as their connections ended`
      : `${f.member} stopped serving at ${at} (${f.cause}), ${back}; its ${n(f.connections)} clients reconnected to the others`;
  return (
    `${what}; during its ${n(f.durationMs / 60_000)} min the group refused in ${f.minutesRefused} of ${f.minutes} minutes ` +
    `(${n(f.refusedConnectionMinutes)} connection-minutes)`
  );
}

/** The summary as aligned text lines. */
export function formatSummary(result: DemoResult): string {
  const s = result.summary;
  if (result.group) return formatGroupSummary(result, result.group);
  const perSku = Object.entries(s.unitHours)
    .map(([sku, h]) => `${sku} ${n(h)}`)
    .join(", ");
  const rows: [string, string][] = [
    [
      "scale operations",
      `${s.scaleOperations.total} (${s.scaleOperations.out} out, ${s.scaleOperations.in} in)`,
    ],
    [
      "clients disconnected",
      `${n(s.disconnected.clients)} by scale-ins${s.disconnected.refused > 0 ? ` (${n(s.disconnected.refused)} of them found no room to reconnect)` : ""}`,
    ],
    ["Premium_P1 → P2", p2Line(s)],
    ["unit-hours", `${n(s.totalUnitHours)}${perSku ? ` (${perSku})` : ""}`],
    [
      "units",
      result.rows.length === 0
        ? "—"
        : `${Math.min(...result.rows.map((r) => r.units))} – ${s.peakUnits} (mean ${n(s.meanUnits)})`,
    ],
    [`minutes > ${s.loadTargetPercent} % load`, `${s.minutesAboveTarget}`],
    [
      "minutes refusing",
      s.minutesRefused === 0
        ? "0"
        : `${s.minutesRefused} (at most ${n(s.peakRefused)} connections refused in a minute)`,
    ],
    ["peak demand", `${n(s.peakDemand)} connections (${n(s.peakConnections)} accepted at most)`],
  ];
  if (s.replicas) rows.push(["app servers", `${s.replicas.min} – ${s.replicas.max} replicas`]);
  rows.push(["anticipation", anticipationLine(result.anticipation)]);
  if (result.leading) rows.push(["leading signal", leadingLine(result.leading, result.anticipation)]);
  rows.push([
    "operator",
    `${n(result.operator.passes)} passes, one per ${n(result.operator.meanPassIntervalSeconds)} s virtual, ` +
      `${n(result.operator.meanPassMs)} ms real each` +
      `${result.operator.failedPasses > 0 ? `, ${result.operator.failedPasses} failed` : ""}; ` +
      `ARM ${n(result.azureCalls.armReads)} reads, ${n(result.azureCalls.armWrites)} writes; ` +
      `${n(result.azureCalls.getBatch)} metrics:getBatch`,
  ]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const when = (iso: string) => iso.replace("T", " ").replace(/:00Z$/, "");
  const title =
    `${result.interrupted ? "Partial summary" : "Summary"}: ${when(s.start)} – ${when(s.end)} UTC, ` +
    `${n(s.minutes)} minutes of traffic in ${formatSeconds(result.replaySeconds)}`;
  const lines = [title, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  if (result.files) {
    lines.push("", "Files:", `  timeline  ${result.files.timeline}`, `  chart     ${result.files.chart}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The operator's line. */
function operatorLine(result: DemoResult): string {
  return (
    `${n(result.operator.passes)} passes, one per ${n(result.operator.meanPassIntervalSeconds)} s virtual, ` +
    `${n(result.operator.meanPassMs)} ms real each` +
    `${result.operator.failedPasses > 0 ? `, ${result.operator.failedPasses} failed` : ""}; ` +
    `ARM ${n(result.azureCalls.armReads)} reads, ${n(result.azureCalls.armWrites)} writes; ` +
    `${n(result.azureCalls.getBatch)} metrics:getBatch`
  );
}

/** The summary of a replica group's run (`--replicas`). */
function formatGroupSummary(result: DemoResult, g: NonNullable<DemoResult["group"]>): string {
  const s = result.summary;
  const rows = groupRows(g);
  const rule = g.failoverRule ? "" : "; the Failover rule off (--no-failover-rule)";
  rows.push(["anticipation", `${anticipationLine(result.anticipation)}${rule}`]);
  if (result.leading) rows.push(["leading signal", leadingLine(result.leading, result.anticipation)]);
  rows.push([`operator (${g.members.length} policies)`, operatorLine(result)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const when = (iso: string) => iso.replace("T", " ").replace(/:00Z$/, "");
  const title =
    `${result.interrupted ? "Partial summary" : "Summary"}: ${when(s.start)} – ${when(s.end)} UTC, ` +
    `${n(s.minutes)} minutes of traffic in ${formatSeconds(result.replaySeconds)}, ${g.members.length} members` +
    `${g.failoverRule ? "" : ", Failover rule off"}`;
  const lines = [title, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  if (result.files) {
    lines.push("", "Files:", `  timeline  ${result.files.timeline}`, `  chart     ${result.files.chart}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The summary for `--output json`. */
export function summaryJson(result: DemoResult, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    ...extra,
    interrupted: result.interrupted,
    summary: result.summary,
    operator: result.operator,
    azureCalls: result.azureCalls,
    anticipation: {
      mode: result.anticipation.mode,
      scaleOuts: result.anticipation.scaleOuts.map((x) => ({ ...x, time: new Date(x.time).toISOString() })),
    },
    ...(result.leading ? { leading: result.leading } : {}),
    ...(result.group ? { group: groupJson(result.group) } : {}),
    cluster: result.cluster,
    replaySeconds: Math.round(result.replaySeconds * 10) / 10,
    wallSeconds: Math.round(result.wallSeconds * 10) / 10,
    ...(result.files ? { files: result.files } : {}),
  };
}

/** A replica group's figures for `--output json`: times as RFC 3339. */
function groupJson(g: NonNullable<DemoResult["group"]>): Record<string, unknown> {
  if (!g.failover) return { members: g.members, failoverRule: g.failoverRule, total: g.total };
  const { startMs, restoredMs, durationMs, ...rest } = g.failover;
  return {
    members: g.members,
    failoverRule: g.failoverRule,
    total: g.total,
    failover: {
      ...rest,
      start: new Date(startMs).toISOString(),
      ...(restoredMs !== undefined ? { restored: new Date(restoredMs).toISOString() } : {}),
      durationMinutes: durationMs / 60_000,
    },
  };
}
