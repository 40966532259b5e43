#!/usr/bin/env node
import { runCli } from "./program.js";

const controller = new AbortController();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => controller.abort(new Error(`received ${sig}`)));
}

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
