/**
 * Sizes of the functions of src/ (tests and test builders aside), read with the TypeScript
 * compiler API: every top-level function declaration, every function or arrow function assigned
 * to a top-level `const`/`let`, and every method, constructor and accessor of a top-level class.
 * A nested closure counts toward the function that holds it.
 *
 * - `lines`: source lines from the declaration's first token to its last, inclusive.
 * - `cyclomatic`: 1 + one per `if`, loop (`for`, `for…in`, `for…of`, `while`, `do`), `case`,
 *   `catch`, `?:`, `&&`, `||` and `??` (McCabe's count as ESLint's `complexity` rule takes it).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** One measured function. */
export interface FunctionSize {
  /** `path:name` (path relative to the root; `Class.member` for class members). */
  name: string;
  /** Source lines, lines. */
  lines: number;
  /** Cyclomatic complexity (see the module comment). */
  cyclomatic: number;
}

/** The distribution of sizes: counts, and lines at the median, p90 and maximum. */
export interface SizeSummary {
  count: number;
  medianLines: number;
  p90Lines: number;
  maxLines: number;
  over50Lines: number;
  over100Lines: number;
  over120Lines: number;
  cyclomaticOver15: number;
  cyclomaticOver30: number;
  maxCyclomatic: number;
}

const BRANCHES = new Set([
  ts.SyntaxKind.IfStatement,
  ts.SyntaxKind.ForStatement,
  ts.SyntaxKind.ForInStatement,
  ts.SyntaxKind.ForOfStatement,
  ts.SyntaxKind.WhileStatement,
  ts.SyntaxKind.DoStatement,
  ts.SyntaxKind.CaseClause,
  ts.SyntaxKind.CatchClause,
  ts.SyntaxKind.ConditionalExpression,
]);
const LOGICAL = new Set([
  ts.SyntaxKind.AmpersandAmpersandToken,
  ts.SyntaxKind.BarBarToken,
  ts.SyntaxKind.QuestionQuestionToken,
]);

function cyclomatic(node: ts.Node): number {
  let n = 1;
  const walk = (x: ts.Node): void => {
    if (BRANCHES.has(x.kind)) n++;
    else if (ts.isBinaryExpression(x) && LOGICAL.has(x.operatorToken.kind)) n++;
    ts.forEachChild(x, walk);
  };
  ts.forEachChild(node, walk);
  return n;
}

/** The measurable functions of one statement, with their names. */
function functionsOf(st: ts.Statement): [string, ts.Node][] {
  if (ts.isFunctionDeclaration(st) && st.body) return [[st.name?.text ?? "default", st]];
  if (ts.isVariableStatement(st))
    return st.declarationList.declarations.flatMap((d): [string, ts.Node][] =>
      d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
        ? [[d.name.getText(), d.initializer]]
        : [],
    );
  if (ts.isClassDeclaration(st))
    return st.members.flatMap((m): [string, ts.Node][] =>
      (ts.isMethodDeclaration(m) || ts.isConstructorDeclaration(m) || ts.isAccessor(m)) && m.body
        ? [[`${st.name?.text ?? "default"}.${m.name?.getText() ?? "constructor"}`, m]]
        : [],
    );
  return [];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .filter((e) => !e.name.endsWith(".test.ts") && e.name !== "testing.ts")
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Every function of `root/src` (see the module comment), largest first. */
export function measureFunctions(root: string): FunctionSize[] {
  const rows: FunctionSize[] = [];
  for (const file of sourceFiles(join(root, "src"))) {
    const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const lineOf = (pos: number) => src.getLineAndCharacterOfPosition(pos).line;
    for (const st of src.statements)
      for (const [name, node] of functionsOf(st))
        rows.push({
          name: `${relative(root, file)}:${name}`,
          lines: lineOf(node.getEnd()) - lineOf(node.getStart()) + 1,
          cyclomatic: cyclomatic(node),
        });
  }
  return rows.sort((a, b) => b.lines - a.lines || b.cyclomatic - a.cyclomatic);
}

/** The distribution of `rows` (nearest-rank percentiles). */
export function summarize(rows: readonly FunctionSize[]): SizeSummary {
  const lines = rows.map((r) => r.lines).sort((a, b) => a - b);
  const rank = (p: number) => lines[Math.max(0, Math.ceil(p * lines.length) - 1)] ?? 0;
  return {
    count: rows.length,
    medianLines: rank(0.5),
    p90Lines: rank(0.9),
    maxLines: lines.at(-1) ?? 0,
    over50Lines: lines.filter((l) => l > 50).length,
    over100Lines: lines.filter((l) => l > 100).length,
    over120Lines: lines.filter((l) => l > 120).length,
    cyclomaticOver15: rows.filter((r) => r.cyclomatic > 15).length,
    cyclomaticOver30: rows.filter((r) => r.cyclomatic > 30).length,
    maxCyclomatic: Math.max(0, ...rows.map((r) => r.cyclomatic)),
  };
}
