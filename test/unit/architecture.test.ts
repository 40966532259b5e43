/**
 * The shape of src/ as a test: no import cycles between its files, and the layer rules of the
 * design (data flows down; nothing below imports from above). Every `src/**\/*.ts` file (tests
 * included) is parsed with the TypeScript compiler API; its imports are the module specifiers of
 * `import … from`, `import "…"`, `export … from`, `import x = require("…")`, `import("…")` calls
 * and `import("…")` types, type-only ones included. Relative specifiers are resolved to files of
 * src/ (`x.js` → `x.ts`, a folder → its `index.ts`); packages and `node:` modules are not checked.
 *
 * A room is a folder directly under src/. To add a rule (or a room such as `prometheus/`), add a
 * row to {@link LAYER_RULES}.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** Files of the rooms in `from` may import nothing from the rooms in `forbidden`. */
interface LayerRule {
  /** Rooms the rule applies to; `"*"` is every room except the forbidden ones. */
  from: readonly string[] | "*";
  forbidden: readonly string[];
  why: string;
}

const ABOVE_THE_PURE_LAYERS = [
  "controller",
  "kube",
  "azure",
  "prometheus",
  "cli",
  "preflight",
  "demo",
  "simulate",
  "emulator",
  "localcluster",
] as const;

const LAYER_RULES: readonly LayerRule[] = [
  {
    from: ["autoscale", "capacity"],
    forbidden: ABOVE_THE_PURE_LAYERS,
    why: "the pure layers know no adapter, controller, command or tool",
  },
  { from: ["capacity"], forbidden: ["autoscale"], why: "capacity sits below the decision" },
  {
    from: ["traffic"],
    forbidden: ["emulator", "simulate", "demo", "controller"],
    why: "the traffic model is shared by the emulator, simulate and demo, and knows none of them",
  },
  {
    from: ["chart"],
    forbidden: [...ABOVE_THE_PURE_LAYERS, "autoscale", "traffic"],
    why: "the shared charts only draw what simulate and demo hand them",
  },
  {
    from: ["demo"],
    forbidden: ["simulate"],
    why: "demo and simulate share traffic/ and chart/, not each other",
  },
  {
    from: ["shared"],
    forbidden: [...ABOVE_THE_PURE_LAYERS, "autoscale", "capacity", "api", "traffic", "chart"],
    why: "shared/ is the bottom: the adapters and the loopback servers build on it, it on none of them",
  },
  {
    from: ["prometheus"],
    forbidden: ["controller", "kube", "azure", "api", "autoscale", "capacity", "emulator", "traffic"],
    why: "the Prometheus adapter is thin: it builds on shared/ only, and the controller composes it",
  },
  {
    from: ["preflight"],
    forbidden: ["kube", "emulator", "demo", "simulate", "localcluster"],
    why: "the preflight reads Azure through the adapters, as the operator's poll cycle does, and nothing else",
  },
  {
    from: [
      ...ABOVE_THE_PURE_LAYERS.filter((room) => room !== "cli"),
      "autoscale",
      "capacity",
      "api",
      "traffic",
      "chart",
    ],
    forbidden: ["preflight"],
    why: "only the commands use the preflight",
  },
  { from: "*", forbidden: ["cli"], why: "the commands are the top layer" },
];

const SRC = resolve(import.meta.dirname, "../../src");

/** One import of a file: its module specifier (undefined for an `import()` of a computed name). */
interface ImportRef {
  specifier: string | undefined;
  line: number;
}

/** The imports of a TypeScript source, static and dynamic, type-only ones included. */
function importsOf(fileName: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const refs: ImportRef[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined) =>
    refs.push({
      specifier: specifier && ts.isStringLiteralLike(specifier) ? specifier.text : undefined,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
    });
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      add(node, node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refs;
}

/** The file of src/ a relative specifier names, relative to src/; undefined when there is none. */
function resolveImport(fromFile: string, specifier: string): string | undefined {
  const target = resolve(SRC, dirname(fromFile), specifier);
  const candidates = [target.replace(/\.js$/, ".ts"), target, `${target}.ts`, join(target, "index.ts")];
  const found = candidates.find((c) => c.endsWith(".ts") && existsSync(c) && statSync(c).isFile());
  if (!found) return undefined;
  const rel = relative(SRC, found);
  return rel.startsWith("..") ? undefined : rel;
}

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path)] : [];
  });
}

/** An import of one file of src/ by another. */
interface Edge {
  from: string;
  to: string;
  line: number;
}

/** The import graph of src/, and the imports that could not be followed. */
function importGraph(): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = sourceFiles().sort();
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const file of files) {
    for (const ref of importsOf(file, readFileSync(join(SRC, file), "utf8"))) {
      if (ref.specifier === undefined) {
        unresolved.push(`${file}:${ref.line}: import() of a computed name`);
        continue;
      }
      if (!ref.specifier.startsWith(".")) continue;
      const to = resolveImport(file, ref.specifier);
      if (to === undefined) unresolved.push(`${file}:${ref.line}: "${ref.specifier}" is no file of src/`);
      else edges.push({ from: file, to, line: ref.line });
    }
  }
  return { files, edges, unresolved };
}

/**
 * The cycles of a graph: one per strongly connected component of more than one node (or a node
 * importing itself), as the files along one cycle through it, the first repeated at the end.
 */
function findCycles(nodes: readonly string[], edges: readonly Pick<Edge, "from" | "to">[]): string[][] {
  const next = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const e of edges) next.get(e.from)?.push(e.to);
  // Tarjan's strongly connected components, iteratively.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; child: number }[] = [{ node: root, child: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; child: number };
      const children = next.get(top.node) ?? [];
      if (top.child < children.length) {
        const child = children[top.child++] as string;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(top.node, Math.min(low.get(top.node) as number, index.get(child) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let n: string | undefined;
        do {
          n = stack.pop() as string;
          onStack.delete(n);
          component.push(n);
        } while (n !== top.node);
        const selfLoop = (next.get(top.node) ?? []).includes(top.node);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }
  // One concrete cycle per component: the shortest way back to its first file, by breadth first.
  return components.map((component) => {
    const members = new Set(component);
    const start = component[0] as string;
    const cameFrom = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const n = queue.shift() as string;
      for (const m of next.get(n) ?? []) {
        if (!members.has(m)) continue;
        if (m === start) {
          const path = [n];
          while (path[0] !== start) path.unshift(cameFrom.get(path[0] as string) as string);
          return [...path, start];
        }
        if (!cameFrom.has(m)) {
          cameFrom.set(m, n);
          queue.push(m);
        }
      }
    }
    return [...component, start];
  });
}

/** The room of a file of src/: its first folder ("" for a file directly in src/). */
function roomOf(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts.length > 1 ? (parts[0] as string) : "";
}

/** The imports that break a rule, one line each. */
function layerViolations(edges: readonly Edge[], rules: readonly LayerRule[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const from = roomOf(e.from);
    const to = roomOf(e.to);
    if (from === to) continue;
    for (const rule of rules) {
      const applies = rule.from === "*" ? !rule.forbidden.includes(from) : rule.from.includes(from);
      if (applies && rule.forbidden.includes(to)) {
        out.push(`${e.from}:${e.line} imports ${e.to}: ${from}/ may not import from ${to}/ (${rule.why})`);
      }
    }
  }
  return out;
}

describe("architecture of src/", () => {
  const graph = importGraph();

  it("reads every file's imports and follows each relative one to a file of src/", () => {
    expect(graph.files.length).toBeGreaterThan(100);
    expect(graph.edges.length).toBeGreaterThan(graph.files.length);
    expect(graph.unresolved).toEqual([]);
  });

  it("has no import cycles", () => {
    const cycles = findCycles(graph.files, graph.edges).map((c) => c.join(" → "));
    expect(cycles, `import cycles in src/:\n${cycles.join("\n")}`).toEqual([]);
  });

  it("keeps the layers: data flows down, nothing below imports from above", () => {
    const violations = layerViolations(graph.edges, LAYER_RULES);
    expect(violations, `layer violations:\n${violations.join("\n")}`).toEqual([]);
  });

  it("has a rule table that names only rooms of src/", () => {
    const rooms = new Set(graph.files.map(roomOf));
    const named = LAYER_RULES.flatMap((rule) => [...(rule.from === "*" ? [] : rule.from), ...rule.forbidden]);
    expect(named.filter((room) => !rooms.has(room))).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("find static, re-exported, dynamic and type imports", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "../b/index.js";',
      'import "./side-effect.js";',
      'export * from "./c.js";',
      'export { d } from "./d.js";',
      'import e = require("./e.js");',
      "const f = await import('./f.js');",
      'type G = import("./g.js").G;',
      "const h = await import(name);",
      "const s = \"import('./not-an-import.js')\";",
    ].join("\n");
    expect(importsOf("x.ts", text)).toEqual([
      { specifier: "./a.js", line: 1 },
      { specifier: "../b/index.js", line: 2 },
      { specifier: "./side-effect.js", line: 3 },
      { specifier: "./c.js", line: 4 },
      { specifier: "./d.js", line: 5 },
      { specifier: "./e.js", line: 6 },
      { specifier: "./f.js", line: 7 },
      { specifier: "./g.js", line: 8 },
      { specifier: undefined, line: 9 },
    ]);
  });

  it("find a cycle and name its files", () => {
    const edges = [
      { from: "a.ts", to: "b.ts" },
      { from: "b.ts", to: "c.ts" },
      { from: "c.ts", to: "a.ts" },
      { from: "c.ts", to: "d.ts" },
      { from: "d.ts", to: "d.ts" },
    ];
    expect(findCycles(["a.ts", "b.ts", "c.ts", "d.ts", "e.ts"], edges)).toEqual([
      ["d.ts", "d.ts"],
      ["a.ts", "b.ts", "c.ts", "a.ts"],
    ]);
    expect(findCycles(["a.ts", "b.ts"], [{ from: "a.ts", to: "b.ts" }])).toEqual([]);
  });

  it("find an import against the layers", () => {
    const edges = [
      { from: "autoscale/decide.ts", to: "emulator/state.ts", line: 3 },
      { from: "demo/chart.ts", to: "simulate/chart.ts", line: 1 },
      { from: "kube/client.ts", to: "cli/flags.ts", line: 9 },
      { from: "cli/main.ts", to: "cli/program.ts", line: 8 },
      { from: "simulate/engine.ts", to: "traffic/index.ts", line: 30 },
    ];
    expect(layerViolations(edges, LAYER_RULES)).toEqual([
      "autoscale/decide.ts:3 imports emulator/state.ts: autoscale/ may not import from emulator/ (the pure layers know no adapter, controller, command or tool)",
      "demo/chart.ts:1 imports simulate/chart.ts: demo/ may not import from simulate/ (demo and simulate share traffic/ and chart/, not each other)",
      "kube/client.ts:9 imports cli/flags.ts: kube/ may not import from cli/ (the commands are the top layer)",
    ]);
  });
});
