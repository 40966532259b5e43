/**
 * `npm run bundle`: the CLI as one esbuild bundle that plain node runs without node_modules — what
 * the container image carries. Writes:
 *
 * - `dist/bundle/signalr-autoscaler.mjs`, the entry (src/cli/main.ts), and its chunks beside it:
 *   one per command (each command's module is imported when it runs, see
 *   src/cli/commands/index.ts) and the code they share. `run` loads the entry, its own chunk and
 *   what they import, never the chunks of the chart renderer, the progress bars or the emulator's
 *   certificate maker;
 * - `dist/bundle.meta.json`, esbuild's metafile (which source went into which chunk, and the
 *   imports between chunks), outside the folder the image copies.
 *
 * ESM for Node 24, every package inlined; the packages' CommonJS `require` of Node's own modules
 * goes through a `createRequire` of the chunk. Minified: a third of the unminified size (5 MiB
 * against 14 MiB) and less memory for the loaded code; stack traces keep the names of classes and
 * functions (`keepNames`).
 */
import { mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build, type Metafile } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The entry file's name in the bundle folder. */
export const BUNDLE_ENTRY = "signalr-autoscaler.mjs";

/**
 * esbuild options every bundle of the operator shares (`npm run bundle`, and `npm run bench`'s
 * operator process): ESM, Node 24, every package inlined, `require` of Node's modules available to
 * the packages' CommonJS code.
 */
export const NODE_BUNDLE_OPTIONS = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  minify: true,
  keepNames: true,
  legalComments: "none",
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  logLevel: "warning",
} as const satisfies BuildOptions;

/** What {@link bundleCli} wrote. */
export interface CliBundle {
  /** The folder of the entry and its chunks. */
  dir: string;
  /** The entry's path. */
  entry: string;
  metafile: Metafile;
}

/**
 * Bundles the CLI into `outdir` (emptied first). `minify: false` for a readable bundle.
 * Throws esbuild's error when a module cannot be resolved or bundled.
 */
export async function bundleCli(outdir: string, options: { minify?: boolean } = {}): Promise<CliBundle> {
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    ...NODE_BUNDLE_OPTIONS,
    ...(options.minify !== undefined ? { minify: options.minify } : {}),
    absWorkingDir: ROOT,
    entryPoints: { [BUNDLE_ENTRY.replace(/\.mjs$/, "")]: "src/cli/main.ts" },
    splitting: true,
    outdir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    metafile: true,
  });
  return { dir: outdir, entry: join(outdir, BUNDLE_ENTRY), metafile: result.metafile };
}

/**
 * The source files (paths relative to the repository, e.g. `node_modules/vega/build/vega.js`,
 * `src/cli/commands/run.ts`) that running `command` loads from a bundle: those of the entry, of
 * the command's own chunk, and of every chunk they import statically. Throws when the metafile has
 * no chunk for the command.
 */
export function commandClosure(metafile: Metafile, command: string): Set<string> {
  const outputs = Object.entries(metafile.outputs);
  const entry = outputs.find(([, o]) => o.entryPoint === "src/cli/main.ts");
  const own = outputs.find(([, o]) => o.entryPoint === `src/cli/commands/${command}.ts`);
  if (!entry || !own) throw new Error(`the bundle has no entry or no chunk of the command "${command}"`);
  const seen = new Set<string>();
  const inputs = new Set<string>();
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    const output = metafile.outputs[path];
    if (!output) return;
    for (const input of Object.keys(output.inputs)) inputs.add(input);
    for (const imported of output.imports) if (imported.kind === "import-statement") visit(imported.path);
  };
  visit(entry[0]);
  visit(own[0]);
  return inputs;
}

/** Total size of the files under `dir`, bytes. */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const s = await stat(join(dir, name));
    if (s.isFile()) total += s.size;
  }
  return total;
}

async function main(): Promise<void> {
  const minify = !process.argv.includes("--no-minify");
  const dir = join(ROOT, "dist", "bundle");
  const bundle = await bundleCli(dir, { minify });
  const metaFile = join(ROOT, "dist", "bundle.meta.json");
  await mkdir(dirname(metaFile), { recursive: true });
  await writeFile(metaFile, `${JSON.stringify(bundle.metafile)}\n`);
  const mib = (await folderBytes(dir)) / 1024 / 1024;
  console.log(
    `${relative(ROOT, bundle.entry)}: ${mib.toFixed(1)} MiB with its chunks; metafile ${relative(ROOT, metaFile)}`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
