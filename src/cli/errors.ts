/**
 * Errors the CLI maps to exit codes, and how they are printed.
 *
 * - {@link UsageError}: the user's input (flags, files) is wrong → exit code 2.
 * - {@link ExitStatus}: the command printed its result and ends with the code it carries (`check`
 *   with a FAIL row → 1); nothing more is printed.
 * - anything else thrown by a command → exit code 1.
 */
import { scrubSecrets } from "../shared/redact.js";

export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A command that printed its result and ends with `code`, without an error message. */
export class ExitStatus extends Error {
  override readonly name = "ExitStatus";
  constructor(readonly code: number) {
    super(`exit status ${code}`);
  }
}

/** Exit codes of the `signalr-autoscaler` binary. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * What the CLI prints for a failed command: `error: <first line of the message>`, and with
 * `verbose` the stack; credentials an error may echo (tokens, keys, passwords) are redacted by
 * `scrubSecrets`, as on every other output.
 */
export function formatCliError(err: unknown, verbose: boolean): string {
  const message = err instanceof Error ? err.message : String(err);
  let out = `error: ${message.split("\n")[0]}\n`;
  if (verbose && err instanceof Error && err.stack) out += `${err.stack}\n`;
  return scrubSecrets(out);
}
