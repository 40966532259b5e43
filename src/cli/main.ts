#!/usr/bin/env node
/**
 * The CLI entry. The first SIGINT/SIGTERM aborts the command's signal, so it stops cleanly (the
 * operator finishes its pass and releases its lease; the demo prints its summary). Copies of that
 * signal arriving within a second (npm and tsx relay the terminal's Ctrl-C to the process that
 * already got it) count as the same one; a later one quits at once.
 */
import { runCli } from "./program.js";

const controller = new AbortController();
let firstSignalAt: number | undefined;
const onSignal = (signal: NodeJS.Signals): void => {
  const now = Date.now();
  if (firstSignalAt === undefined) {
    firstSignalAt = now;
    controller.abort(new Error(`received ${signal}`));
    return;
  }
  if (now - firstSignalAt >= 1000) process.exit(130);
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
// Output piped into `head` and the like: the reader left, nothing more to say.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
}

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
// After a stop, a request cut off mid-flight can leave an SDK's timeout timer behind: do not wait for it.
if (controller.signal.aborted) setTimeout(() => process.exit(), 3000).unref();
