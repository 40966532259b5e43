import { fmt } from "../autoscale/signals.js";

/** Output formats every command accepts through `--output`. */
export type OutputFormat = "table" | "json";

/** Writes anything JSON-serializable, pretty-printed, followed by a newline. */
export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Renders rows as an aligned text table. Numbers are right-aligned, everything else left-aligned.
 * `rows` are arrays of cells in the same order as `headers`.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cells = rows.map((row) => row.map((c) => (typeof c === "number" ? formatNumber(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? "").length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...cells.map(line)].join("\n")}\n`;
}

/** Formats a number with thousands separators and at most two decimals. */
export function formatNumber(n: number): string {
  return Number.isFinite(n) ? fmt(n) : String(n);
}
