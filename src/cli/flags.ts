/** Flag values shared by several commands: files, durations and times. Bad values → UsageError (exit 2). */
import { readFile } from "node:fs/promises";
import { parseDuration } from "../api/duration.js";
import { parseTraceTimestamp } from "../traffic/index.js";
import { UsageError } from "./errors.js";

/** Reads the file a flag names; `shown` is the path as the user typed it. */
export async function readFlagFile(flag: string, path: string, shown = path): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read --${flag} ${shown}: ${code ?? (err as Error).message}`);
  }
}

/** A duration flag ("90s", "5m", "1h30m") in milliseconds. */
export function durationFlag(name: string, text: string): number {
  try {
    return parseDuration(text) * 1000;
  } catch (err) {
    throw new UsageError(`--${name}: ${(err as Error).message}`);
  }
}

/** A time flag (YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] UTC, or RFC 3339) in ms since the epoch. */
export function timeFlag(name: string, text: string): number {
  const t = text.trim();
  const ms = parseTraceTimestamp(/^\d{4}-\d{2}-\d{2}$/.test(t) ? `${t} 00:00:00` : t);
  if (ms === undefined) {
    throw new UsageError(
      `--${name} "${text}" is not a time (YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] UTC, or RFC 3339)`,
    );
  }
  return ms;
}
