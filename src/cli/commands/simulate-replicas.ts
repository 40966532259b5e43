/**
 * `simulate --replicas` and `--failover`: the flags of a replica group's backtest and its report
 * (src/simulate/replicas.ts) — each member's figures and the group's, with the Failover rule and
 * without it, side by side, and what each refused during the failover.
 */
import { MINUTE_MS } from "../../simulate/engine.js";
import type {
  FailoverScenario,
  GroupMember,
  MemberFigures,
  ReplicaComparison,
} from "../../simulate/replicas.js";
import { UsageError } from "../errors.js";
import { durationFlag, timeFlag } from "../flags.js";
import { formatNumber, formatTable } from "../output.js";

/**
 * What a failover should refuse at most with the Failover rule, as a share of what the same
 * policies refuse without it in the same run (refused minutes during the failover): half.
 */
export const FAILOVER_REFUSED_TARGET = 0.5;

/** A member's name: a replica's name by the 2024-03-01 specs (`ReplicaName`), used as its region too. */
const MEMBER_NAME = /^[a-zA-Z][a-zA-Z0-9-]{1,61}[a-zA-Z0-9]$/;

/**
 * Most members one group may have: the primary and 8 replicas ("The replica count is currently
 * limited to a maximum of 8 per primary resource", Geo-replication in Azure SignalR, Microsoft
 * Learn).
 */
export const MAX_MEMBERS = 9;

/**
 * `--replicas name=share[,…]`: the members (the first is the primary) and their shares of the
 * trace's demand, normalized to 1.
 * @throws UsageError naming the bad entry.
 */
export function parseReplicas(text: string): GroupMember[] {
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const members: GroupMember[] = [];
  for (const entry of entries) {
    const [name, share, ...rest] = entry.split("=").map((s) => s.trim());
    if (!name || share === undefined || rest.length > 0)
      throw new UsageError(
        `--replicas: "${entry}" is not name=share (e.g. eastus=0.5,westus=0.3,westeurope=0.2)`,
      );
    if (!MEMBER_NAME.test(name))
      throw new UsageError(
        `--replicas: "${name}" is not a replica name (3–63 letters, digits and hyphens, starting with a letter, ending with a letter or digit)`,
      );
    const value = Number(share);
    if (share === "" || !Number.isFinite(value) || value <= 0)
      throw new UsageError(`--replicas: the share of ${name} must be a number > 0, got "${share}"`);
    if (members.some((m) => m.name.toLowerCase() === name.toLowerCase()))
      throw new UsageError(`--replicas: ${name} is listed twice`);
    members.push({ name, share: value });
  }
  if (members.length < 2 || members.length > MAX_MEMBERS)
    throw new UsageError(
      `--replicas needs 2 to ${MAX_MEMBERS} members (the primary first, then at most 8 replicas, Azure's limit per instance), e.g. eastus=0.5,westus=0.3,westeurope=0.2`,
    );
  const total = members.reduce((a, m) => a + m.share, 0);
  return members.map((m) => ({ name: m.name, share: m.share / total }));
}

/** The peak minute of `demand` (the first of equal ones), as a time. */
function peakTime(demand: Float64Array, startMs: number): number {
  let at = 0;
  for (let m = 1; m < demand.length; m++) if ((demand[m] as number) > (demand[at] as number)) at = m;
  return startMs + at * MINUTE_MS;
}

/**
 * `--failover member@peak` or `member@<time>` with `--failover-duration`: the member that stops
 * serving, when (the demand's peak minute, or a time within the slice, rounded down to its
 * minute) and for how long (at most to the end of the slice).
 * @throws UsageError for an unknown member, a time outside the slice or a duration under a minute.
 */
export function parseFailover(
  text: string,
  durationText: string,
  members: readonly GroupMember[],
  slice: { startMs: number; demand: Float64Array },
): FailoverScenario {
  const at = text.indexOf("@");
  if (at <= 0) throw new UsageError(`--failover must be member@peak or member@<time>, got "${text}"`);
  const member = text.slice(0, at).trim();
  const when = text.slice(at + 1).trim();
  if (!members.some((m) => m.name === member))
    throw new UsageError(
      `--failover: ${member} is not a member of --replicas (${members.map((m) => m.name).join(", ")})`,
    );
  const durationMs = durationFlag("failover-duration", durationText);
  if (durationMs < MINUTE_MS) throw new UsageError("--failover-duration must be at least 1m");
  const endMs = slice.startMs + slice.demand.length * MINUTE_MS;
  const startMs =
    when === "peak"
      ? peakTime(slice.demand, slice.startMs)
      : Math.floor(timeFlag("failover", when) / MINUTE_MS) * MINUTE_MS;
  if (startMs < slice.startMs || startMs >= endMs)
    throw new UsageError(
      `--failover: ${new Date(startMs).toISOString()} is outside the simulated slice ${new Date(slice.startMs).toISOString()} → ${new Date(endMs).toISOString()}`,
    );
  // A failover longer than what is left of the slice lasts to its end (and the report says so).
  return { member, startMs, durationMs: Math.min(durationMs, endMs - startMs) };
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/:00\.000Z$/, "Z");
const round1 = (n: number) => Math.round(n * 10) / 10;

/** The failover's line: who, when, for how long, and where its clients go. */
function failoverLine(c: ReplicaComparison): string {
  const f = c.failover;
  if (!f) return "failover: none (--failover member@peak to add one)";
  const others = c.members.filter((m) => m.name !== f.member).map((m) => m.name);
  return `failover: ${f.member} stops serving at ${iso(f.startMs)} for ${formatNumber(f.durationMs / MINUTE_MS)} min (ARM shows it at once); its clients reconnect to ${others.join(" and ")} by their shares within the minute, and come back as they reconnect once it serves again`;
}

function ratio(on: number, off: number): string {
  if (off === 0) return on === 0 ? "none either way" : "more with the rule";
  return `${formatNumber(Math.round((on / off) * 100))} % of the rule off`;
}

/** The first scale-out of each survivor after the failure, in words. */
function firstScaleOuts(figures: readonly MemberFigures[], failed: string): string {
  return figures
    .filter((f) => f.name !== "total" && f.name !== failed)
    .map((f) => {
      const first =
        f.firstScaleOutMinutes === undefined ? "none" : `+${formatNumber(f.firstScaleOutMinutes)} min`;
      const busy =
        f.inFlightAtFailureMinutes === undefined
          ? ""
          : ` (a scale-out sent ${formatNumber(f.inFlightAtFailureMinutes)} min before the failure still running: ARM takes one update at a time)`;
      return `${f.name} ${first}${busy}`;
    })
    .join(", ");
}

/** What the failover itself cost: each run's refusals in its minutes over the baseline's (the same run without it). */
function baselineLine(c: ReplicaComparison): string[] {
  const f = c.failover;
  const base = c.baseline?.figures.at(-1);
  if (!f || !base) return [];
  const [a, b] = c.runs.map((r) => r.figures.at(-1) as MemberFigures) as [MemberFigures, MemberFigures];
  const minutes = (x: MemberFigures) => x.failoverMinutesRefused - base.failoverMinutesRefused;
  const conns = (x: MemberFigures) =>
    Math.round(x.failoverRefusedConnectionMinutes - base.failoverRefusedConnectionMinutes);
  return [
    `without the failover the same minutes refuse ${formatNumber(base.failoverMinutesRefused)} minutes and ${formatNumber(Math.round(base.failoverRefusedConnectionMinutes))} connection-minutes; the failover's own part: ${formatNumber(minutes(a))} minutes and ${formatNumber(conns(a))} connection-minutes with the rule, ${formatNumber(minutes(b))} and ${formatNumber(conns(b))} without (${ratio(conns(a), conns(b))} of the connection-minutes)`,
  ];
}

/**
 * The failover's refused minutes with the Failover rule ÷ without it (same run), against
 * {@link FAILOVER_REFUSED_TARGET}; undefined when nothing was refused without it.
 */
export function failoverRatio(c: ReplicaComparison): {
  minutes: number | undefined;
  connectionMinutes: number | undefined;
  target: number;
  met: boolean;
} {
  const [a, b] = c.runs.map((r) => r.figures.at(-1) as MemberFigures) as [MemberFigures, MemberFigures];
  const div = (on: number, off: number) => (off > 0 ? on / off : undefined);
  const minutes = div(a.failoverMinutesRefused, b.failoverMinutesRefused);
  return {
    minutes,
    connectionMinutes: div(a.failoverRefusedConnectionMinutes, b.failoverRefusedConnectionMinutes),
    target: FAILOVER_REFUSED_TARGET,
    met: minutes === undefined ? a.failoverMinutesRefused === 0 : minutes <= FAILOVER_REFUSED_TARGET,
  };
}

/** The ratio's line: on ÷ off, and plainly whether it is within the target. */
function ratioLine(c: ReplicaComparison): string {
  const [a, b] = c.runs.map((r) => r.figures.at(-1) as MemberFigures) as [MemberFigures, MemberFigures];
  const r = failoverRatio(c);
  const target = `the target (at most ${formatNumber(FAILOVER_REFUSED_TARGET)} of the minutes refused with failover awareness off)`;
  if (r.minutes === undefined)
    return `refused minutes during the failover, rule on ÷ off: ${formatNumber(a.failoverMinutesRefused)} ÷ 0 — nothing refused without the rule${r.met ? " nor with it" : ", so the rule refused more"}`;
  const value = formatNumber(Math.round(r.minutes * 100) / 100);
  const verdict = r.met ? `within ${target}: met` : `above ${target}: not met`;
  return `refused minutes during the failover, rule on ÷ off: ${formatNumber(a.failoverMinutesRefused)} ÷ ${formatNumber(b.failoverMinutesRefused)} = ${value}, ${verdict}`;
}

/** The text report of a replica group's comparison: the table, the failover's figures. */
export function renderReplicas(c: ReplicaComparison, header: readonly string[]): string {
  const [on, off] = c.runs;
  const rows = on.figures.flatMap((a, i) => {
    const b = off.figures[i] as MemberFigures;
    const share = c.members.find((m) => m.name === a.name)?.share;
    const name =
      share !== undefined ? `${a.name} (${formatNumber(Math.round(share * 1000) / 10)} %)` : a.name;
    return [a, b].map((f, j) => [
      j === 0 ? name : "",
      j === 0 ? "on" : "off",
      f.minutesRefused,
      Math.round(f.refusedConnectionMinutes),
      round1(f.unitHours),
      Math.round(f.clientsDisconnected),
      f.failoverMinutesRefused,
      Math.round(f.failoverRefusedConnectionMinutes),
      f.firstScaleOutMinutes === undefined ? "-" : `+${formatNumber(f.firstScaleOutMinutes)} min`,
    ]);
  });
  const table = formatTable(
    [
      "MEMBER",
      "FAILOVER RULE",
      "MIN REFUSED",
      "REFUSED CONN-MIN",
      "UNIT-HOURS",
      "DISCONNECTED",
      "FAILOVER MIN REFUSED",
      "FAILOVER CONN-MIN",
      "FIRST SCALE-OUT",
    ],
    rows,
  );
  const lines = [...header, failoverLine(c), "", table];
  const f = c.failover;
  if (f) {
    const a = on.figures.at(-1) as MemberFigures;
    const b = off.figures.at(-1) as MemberFigures;
    lines.push(
      `during the failover (${iso(f.startMs)} → ${iso(f.startMs + f.durationMs)}): refused minutes ${formatNumber(a.failoverMinutesRefused)} with the Failover rule, ${formatNumber(b.failoverMinutesRefused)} without (${ratio(a.failoverMinutesRefused, b.failoverMinutesRefused)}); refused connection-minutes ${formatNumber(Math.round(a.failoverRefusedConnectionMinutes))} and ${formatNumber(Math.round(b.failoverRefusedConnectionMinutes))} (${ratio(a.failoverRefusedConnectionMinutes, b.failoverRefusedConnectionMinutes)})`,
      ratioLine(c),
      ...baselineLine(c),
      `survivors' first scale-out after the failure became visible (a poll every ${formatNumber(c.pollMinutes)} min): with the rule ${firstScaleOuts(on.figures, f.member)}; without ${firstScaleOuts(off.figures, f.member)}`,
    );
  }
  lines.push(
    "minutes refused: the group's row counts a minute once when any member refused in it; the failover columns count [start, start + duration)",
  );
  return `${lines.join("\n")}\n`;
}

/** The JSON of a replica group's comparison. */
export function replicasJson(c: ReplicaComparison): Record<string, unknown> {
  const [on, off] = c.runs;
  const f = c.failover;
  return {
    members: c.members.map((m, i) => ({
      name: m.name,
      role: i === 0 ? "Primary" : "Replica",
      share: m.share,
      initial: c.initial[i],
    })),
    ...(f
      ? {
          failover: {
            member: f.member,
            start: new Date(f.startMs).toISOString(),
            durationMinutes: f.durationMs / MINUTE_MS,
          },
        }
      : {}),
    pollMinutes: c.pollMinutes,
    ...(f ? { failoverRatio: failoverRatio(c) } : {}),
    failoverRuleOn: on.figures,
    failoverRuleOff: off.figures,
    ...(c.baseline ? { withoutFailover: c.baseline.figures } : {}),
  };
}
