import type { CliIo } from "./io.js";
import { runCli } from "./program.js";

/** A {@link CliIo} that records what a command prints, for tests. */
export function captureIo(cwd = process.cwd()): CliIo & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    cwd,
    env: {},
    signal: new AbortController().signal,
    out: () => out,
    err: () => err,
  };
}

/** Runs the CLI with `argv` as `main` does, on a {@link captureIo} in `cwd`: its exit code and what it printed. */
export async function runCaptured(argv: readonly string[], cwd?: string) {
  const io = captureIo(cwd);
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}
