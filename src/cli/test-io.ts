import type { CliIo } from "./io.js";

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
