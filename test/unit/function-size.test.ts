/**
 * The size limits src/ holds (tests and test builders aside; measured as test/unit/function-sizes.ts
 * says): no function over 120 lines, none with cyclomatic complexity over 30. Biome's
 * `noExcessiveCognitiveComplexity` (biome.json, at most 25) holds the cognitive side.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { measureFunctions, summarize } from "./function-sizes.js";

const MAX_LINES = 120;
const MAX_CYCLOMATIC = 30;

describe("function sizes in src/", () => {
  const rows = measureFunctions(join(import.meta.dirname, "..", ".."));

  it("measures every function", () => {
    expect(rows.length).toBeGreaterThan(500);
    expect(rows.find((r) => r.name === "src/autoscale/decide.ts:decide")).toBeDefined();
  });

  it(`has no function over ${MAX_LINES} lines`, () => {
    expect(rows.filter((r) => r.lines > MAX_LINES).map((r) => `${r.name} (${r.lines} lines)`)).toEqual([]);
  });

  it(`has no function with cyclomatic complexity over ${MAX_CYCLOMATIC}`, () => {
    expect(
      rows.filter((r) => r.cyclomatic > MAX_CYCLOMATIC).map((r) => `${r.name} (${r.cyclomatic})`),
    ).toEqual([]);
  });
});

describe("measureFunctions", () => {
  it("counts lines and branches of functions, arrows and class members; skips tests", () => {
    const root = mkdtempSync(join(tmpdir(), "function-sizes-"));
    try {
      mkdirSync(join(root, "src", "a"), { recursive: true });
      writeFileSync(
        join(root, "src", "a", "f.ts"),
        [
          "export function f(x: number, y?: number): number {",
          "  if (x > 1 && y !== undefined) return 1;",
          "  for (const z of [1, 2]) x += z;",
          "  const inner = () => (x ? 2 : (y ?? 3));",
          "  switch (x) {",
          "    case 1: return 1;",
          "    default: return inner();",
          "  }",
          "}",
          "export const g = (s: string) => s || 'x';",
          "class C {",
          "  m(): void { try { g('a'); } catch { /* none */ } }",
          "}",
          "export { C };",
        ].join("\n"),
      );
      writeFileSync(join(root, "src", "a", "f.test.ts"), "export function t() { return 1; }\n");
      const rows = measureFunctions(root);
      expect(rows).toEqual([
        // 1 + if + && + for + ?: + ?? + case = 7
        { name: "src/a/f.ts:f", lines: 9, cyclomatic: 7 },
        { name: "src/a/f.ts:g", lines: 1, cyclomatic: 2 },
        { name: "src/a/f.ts:C.m", lines: 1, cyclomatic: 2 },
      ]);
      expect(summarize(rows)).toMatchObject({ count: 3, medianLines: 1, maxLines: 9, maxCyclomatic: 7 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
