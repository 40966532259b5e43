/**
 * The demo's live view: lines in the spirit of `kubectl get capol -w` and `kubectl get events -w`,
 * on the virtual clock. Pure formatting; {@link LiveView} decides when to print.
 *
 *   23:05  load 100 %  conns  80,000  Premium_P1 ×  80 → Premium_P2 × 200  replicas 16  ScaleInProgress  refused 37,000
 *   23:05  event  Normal  ScalingOut  Premium_P1 × 80 → Premium_P2 × 200 units (serverLoad)
 */
import type { SkuName } from "../capacity/index.js";
import type { PassReport } from "../controller/operator.js";

/** What one status line shows. */
export interface StatusView {
  /** Virtual time, ms. */
  time: number;
  /** Server load of the last complete minute, %. */
  loadPercent?: number | undefined;
  /** Accepted client connections of the last complete minute. */
  connections?: number | undefined;
  /** Client connections wanted in that minute. */
  demand?: number | undefined;
  sku: SkuName;
  units: number;
  /** Target of an ARM update in flight. */
  updatingTo?: { sku: SkuName; units: number } | undefined;
  replicas?: number | undefined;
  /** What the last pass did or what held it back. */
  reason: string;
  /** The member of a replica group the line is of (`--replicas`), shown after the time. */
  member?: string | undefined;
}

/** An Event as the live view prints it. */
export interface EventView {
  time: number;
  type: string;
  reason: string;
  message: string;
  count?: number;
  /** The member of a replica group whose policy the Event is of (`--replicas`). */
  member?: string | undefined;
}

const num = (n: number) => Math.round(n).toLocaleString("en-US");

/** `HH:MM` of a virtual time (UTC). */
function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

/** `YYYY-MM-DD` of a virtual time (UTC). */
function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** One status line (no newline). */
export function formatStatus(v: StatusView): string {
  const load = v.loadPercent === undefined ? "   ?" : `${String(Math.round(v.loadPercent)).padStart(3)} %`;
  const conns = v.connections === undefined ? "?" : num(v.connections);
  const demand =
    v.demand !== undefined && v.connections !== undefined && v.demand - v.connections >= 1
      ? `  refused ${num(v.demand - v.connections)}`
      : "";
  const size = `${v.sku} × ${String(v.units).padStart(3)}`;
  const to = v.updatingTo ? ` → ${v.updatingTo.sku} × ${v.updatingTo.units}` : "";
  const replicas = v.replicas === undefined ? "" : `  replicas ${String(v.replicas).padStart(2)}`;
  const member = v.member === undefined ? "" : `  ${v.member}`;
  return `${clock(v.time)}${member}  load ${load}  conns ${conns.padStart(7)}  ${size}${to}${replicas}  ${v.reason}${demand}`;
}

/** One Event line (no newline). */
export function formatEvent(e: EventView): string {
  const count = e.count !== undefined && e.count > 1 ? ` (×${e.count})` : "";
  const member = e.member === undefined ? "" : `  ${e.member}`;
  return `${clock(e.time)}${member}  event  ${e.type.padEnd(7)} ${e.reason}  ${e.message}${count}`;
}

/** A short reason for the status line from a pass report. */
export function passReason(report: PassReport): string {
  if (report.error !== undefined) {
    const message = report.error instanceof Error ? report.error.message : String(report.error);
    return `PassFailed: ${message.split("\n")[0]?.slice(0, 120)}`;
  }
  const result = report.result;
  const decision = result?.decision;
  if (!result || !decision) return result?.outcome ?? "—";
  const driven = decision.drivenBy ? ` (${decision.drivenBy})` : "";
  switch (result.outcome) {
    case "scaled": {
      const d = decision.desired;
      const c = decision.current;
      if (d && (d.units !== c.units || d.sku !== c.sku))
        return `${d.units >= c.units ? "ScalingOut" : "ScalingIn"}${driven}`;
      return "AppServersScaled";
    }
    case "inProgress":
      return "ScaleInProgress";
    case "invalid":
      return "InvalidSpec";
    case "instanceUnavailable":
      return "InstanceUnavailable";
    case "outOfScope":
      return "OutOfScope";
    case "notLeader":
      return "NotLeader";
    default:
      return decision.limitedBy ?? (decision.action === "None" ? "WithinTarget" : decision.action);
  }
}

/** Where the live view writes, and whether it may redraw a line in place. */
export interface LiveSink {
  write(text: string): void;
  /** A terminal: the latest status is redrawn in place; otherwise plain lines only. */
  tty: boolean;
}

/**
 * Prints status lines when something changes (size, update in flight, replicas, a failing pass) or every
 * `everyMs` of virtual time, Events as they come, and a date line when the day changes. On a
 * terminal, the newest status also stays on the last line, redrawn at every pass.
 *
 * With `holdMs` > 0 the lines are printed in virtual-time order: each waits until a line `holdMs`
 * (virtual ms) newer has come, so that an Event the API server's watch delivers after a later
 * pass's status line (a few real ms are a minute of virtual time at ×720) still comes before it;
 * {@link note} and {@link finish} print all that wait. With 0 (the default) each prints at once.
 */
export class LiveView {
  readonly #sink: LiveSink;
  readonly #everyMs: number;
  readonly #holdMs: number;
  /** Per member ("" without a group): the last printed line's key and time. */
  readonly #last = new Map<string, { key: string; printed: number }>();
  /** Lines waiting for their turn (`holdMs` > 0), in arrival order. */
  #held: { time: number; text: string }[] = [];
  /** The newest virtual time a line has had. */
  #newest = Number.NEGATIVE_INFINITY;
  #day = "";
  #pending = "";

  constructor(sink: LiveSink, options: { everyMs?: number; holdMs?: number } = {}) {
    this.#sink = sink;
    this.#everyMs = options.everyMs ?? 30 * 60_000;
    this.#holdMs = options.holdMs ?? 0;
  }

  /** A status after a pass. */
  status(v: StatusView): void {
    // Reasons alone (WithinTarget, StabilizedDown, Settling …) change often: they ride along.
    const key = `${v.sku}|${v.units}|${v.updatingTo?.sku}|${v.updatingTo?.units}|${v.replicas}|${v.reason.startsWith("PassFailed") || v.reason.startsWith("NotServing")}`;
    const line = formatStatus(v);
    const last = this.#last.get(v.member ?? "") ?? { key: "", printed: Number.NEGATIVE_INFINITY };
    if (key !== last.key || v.time - last.printed >= this.#everyMs) {
      this.#last.set(v.member ?? "", { key, printed: v.time });
      this.line(v.time, line);
      if (this.#holdMs > 0 && this.#sink.tty && this.#held.length > 0) {
        // Held: shown on the redrawn line meanwhile.
        this.#pending = line;
        this.#sink.write(`\r\x1b[2K${line}`);
      }
    } else if (this.#sink.tty) {
      this.#pending = line;
      this.#sink.write(`\r\x1b[2K${line}`);
    }
  }

  /** An Event. */
  event(e: EventView): void {
    this.line(e.time, formatEvent(e));
  }

  /** A line of its own at a virtual time (a date line first when the day changed). */
  line(time: number, text: string): void {
    if (this.#holdMs <= 0) {
      this.#write([{ time, text }], false);
      return;
    }
    this.#held.push({ time, text });
    this.#newest = Math.max(this.#newest, time);
    this.#release(this.#newest - this.#holdMs);
  }

  /** Plain text (no time), e.g. a notice; the lines waiting are printed first. */
  note(text: string): void {
    this.#release(Number.POSITIVE_INFINITY);
    const clear = this.#sink.tty && this.#pending !== "" ? "\r\x1b[2K" : "";
    this.#pending = "";
    this.#sink.write(`${clear}${text}\n`);
  }

  /** Prints the lines waiting and clears a redrawn line before other output follows. */
  finish(): void {
    this.#release(Number.POSITIVE_INFINITY);
    if (this.#sink.tty && this.#pending !== "") this.#sink.write("\r\x1b[2K");
    this.#pending = "";
  }

  /** Prints the held lines of `untilMs` or before, in time order (stable: arrival order within a time). */
  #release(untilMs: number): void {
    const due = this.#held.filter((l) => l.time <= untilMs).sort((a, b) => a.time - b.time);
    if (due.length === 0) return;
    this.#held = this.#held.filter((l) => l.time > untilMs);
    this.#write(due, this.#held.length > 0 || untilMs !== Number.POSITIVE_INFINITY);
  }

  /**
   * Writes lines (a date line before one of a new day); on a terminal the redrawn status is
   * cleared first and, with `redraw`, drawn again after them.
   */
  #write(lines: readonly { time: number; text: string }[], redraw: boolean): void {
    const pending = this.#sink.tty ? this.#pending : "";
    let out = pending !== "" ? "\r\x1b[2K" : "";
    for (const { time, text } of lines) {
      const d = day(time);
      if (d !== this.#day) {
        this.#day = d;
        out += `── ${d} (UTC) ──\n`;
      }
      out += `${text}\n`;
    }
    if (redraw && pending !== "") out += pending;
    else this.#pending = "";
    this.#sink.write(out);
  }
}
