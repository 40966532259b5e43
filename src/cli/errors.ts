/**
 * Errors the CLI maps to exit codes.
 *
 * - {@link UsageError}: the user's input (flags, files) is wrong → exit code 2.
 * - anything else thrown by a command → exit code 1.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Exit codes of the `signalr-autoscaler` binary. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;
