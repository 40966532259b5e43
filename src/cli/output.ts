import { fmt } from "../autoscale/signals.js";

/** Output formats every command accepts through `--output`. */
export type OutputFormat = "table" | "json";

/** Writes anything JSON-serializable, pretty-printed, followed by a newline. */
export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Renders rows as an aligned text table. Numbers are right-aligned, everything else left-aligned.
 * `rows` are arrays of cells in the same order as `headers`. A cell with line breaks takes as many
 * lines, the other cells of its row blank on the lines after the first.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cells = rows.map((row) => row.map((c) => (typeof c === "number" ? formatNumber(c) : c).split("\n")));
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...cells.flatMap((r) => (r[i] ?? [""]).map((line) => line.length))),
  );
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const lines = cells.flatMap((r) => {
    const height = Math.max(1, ...r.map((c) => c.length));
    return Array.from({ length: height }, (_, k) => line(r.map((c) => c[k] ?? "")));
  });
  return `${[line(headers), ...lines].join("\n")}\n`;
}

/** Formats a number with thousands separators and at most two decimals. */
export function formatNumber(n: number): string {
  return Number.isFinite(n) ? fmt(n) : String(n);
}
