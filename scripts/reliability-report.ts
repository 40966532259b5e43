/**
 * Renders the fault matrix of `docs/reliability.md` from the rows the fault tests recorded in one
 * run of the suite (test/reliability/record.ts):
 *
 *   RELIABILITY_RECORD=/tmp/faults.jsonl npm test
 *   npm run reliability:report -- /tmp/faults.jsonl
 *
 * The table between `<!-- fault-matrix:start -->` and `<!-- fault-matrix:end -->` is replaced;
 * the rest of the document is left as it is. A later row with the same `id` replaces an earlier
 * one. Exits 1 with a message when the file is missing or holds no row.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FaultRow } from "../test/reliability/record.js";

const ORDER = ["token", "ARM", "Azure Monitor", "Prometheus", "kube-apiserver", "operator", "spec", "all"];
const START = "<!-- fault-matrix:start -->";
const END = "<!-- fault-matrix:end -->";

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function figure(value: number | string | boolean): string {
  if (typeof value === "number")
    return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toFixed(1);
  return String(value);
}

/** The markdown table of `rows`, ordered by where the fault lives, then by id. */
export function matrix(rows: readonly FaultRow[]): string {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const sorted = [...byId.values()].sort(
    (a, b) =>
      (ORDER.indexOf(a.endpoint) + 1 || 99) - (ORDER.indexOf(b.endpoint) + 1 || 99) ||
      a.id.localeCompare(b.id),
  );
  const lines = [
    "| # | Where | Fault | Safe outcome | Test | Measured |",
    "|---|---|---|---|---|---|",
    ...sorted.map((r, i) => {
      const figures = Object.entries(r.figures)
        .map(([k, v]) => `${k} ${figure(v)}`)
        .join("; ");
      return `| ${i + 1} | ${cell(r.endpoint)} | ${cell(r.fault)} | ${cell(r.outcome)} | \`${cell(r.test)}\` | ${cell(figures)} |`;
    }),
  ];
  return lines.join("\n");
}

function main(): number {
  const file = process.argv[2];
  if (!file) {
    console.error(
      "usage: npm run reliability:report -- <rows.jsonl>  (written by RELIABILITY_RECORD=<rows.jsonl> npm test)",
    );
    return 1;
  }
  let rows: FaultRow[];
  try {
    rows = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as FaultRow);
  } catch (err) {
    console.error(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  if (rows.length === 0) {
    console.error(`${file} holds no row: run the suite with RELIABILITY_RECORD=${file}`);
    return 1;
  }
  const doc = join(import.meta.dirname, "..", "docs", "reliability.md");
  const text = readFileSync(doc, "utf8");
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) {
    console.error(`${doc} has no ${START} … ${END} block`);
    return 1;
  }
  writeFileSync(doc, `${text.slice(0, a + START.length)}\n${matrix(rows)}\n${text.slice(b)}`);
  console.log(`${new Set(rows.map((r) => r.id)).size} faults written to docs/reliability.md`);
  return 0;
}

process.exitCode = main();
