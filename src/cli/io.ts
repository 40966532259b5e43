/**
 * The streams and environment a command runs against. Passed in, never taken from globals, so
 * commands run the same in tests as from the terminal.
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Working directory against which relative file paths are resolved. */
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Aborted when the process is asked to stop (SIGINT/SIGTERM). */
  signal: AbortSignal;
}
