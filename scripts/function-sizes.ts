/**
 * Prints the sizes of the functions of src/ (test/unit/function-sizes.ts measures them, the test
 * beside it holds the limits): the distribution as JSON, then the largest by lines and by
 * cyclomatic complexity.
 *
 * Usage: npx tsx scripts/function-sizes.ts [--top N]   (N: how many of each list, default 10)
 */
import { join } from "node:path";
import { measureFunctions, summarize } from "../test/unit/function-sizes.js";

const at = process.argv.indexOf("--top");
const top = at === -1 ? 10 : Number(process.argv[at + 1]);
if (!Number.isInteger(top) || top < 0) throw new Error(`--top: a whole number, not ${process.argv[at + 1]}`);

const rows = measureFunctions(join(import.meta.dirname, ".."));
console.log(JSON.stringify(summarize(rows), null, 2));
console.log(`\nlargest by lines:`);
for (const r of rows.slice(0, top)) console.log(`  ${String(r.lines).padStart(4)} lines  ${r.name}`);
console.log(`\nlargest by cyclomatic complexity:`);
for (const r of [...rows].sort((a, b) => b.cyclomatic - a.cyclomatic).slice(0, top))
  console.log(`  ${String(r.cyclomatic).padStart(4)}  ${r.name}`);
