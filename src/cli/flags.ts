/** Flag values shared by several commands: files, numbers, durations and times. Bad values → UsageError (exit 2). */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
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

/**
 * Reads the file `path` (relative to `cwd`) that `flag` (`--policy`) names.
 * @throws UsageError naming the flag and the path as typed when it cannot be read.
 */
export function readFlagText(path: string, flag: string, cwd: string): Promise<string> {
  return readFlagFile(flag.replace(/^--/, ""), resolve(cwd, path), path);
}

/** Parses a numeric flag; throws {@link UsageError} for anything that is not a finite number in range. */
export function numberFlag(
  name: string,
  raw: string | undefined,
  opts: { integer?: boolean; min?: number; exclusiveMin?: number; max?: number } = {},
): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw.replaceAll("_", ""));
  const bad = (why: string) => new UsageError(`--${name} ${why}, got "${raw}"`);
  if (raw.trim() === "" || !Number.isFinite(value)) throw bad("must be a number");
  if (opts.integer && !Number.isInteger(value)) throw bad("must be a whole number");
  if (opts.min !== undefined && value < opts.min) throw bad(`must be at least ${opts.min}`);
  if (opts.exclusiveMin !== undefined && value <= opts.exclusiveMin)
    throw bad(`must be greater than ${opts.exclusiveMin}`);
  if (opts.max !== undefined && value > opts.max) throw bad(`must be at most ${opts.max}`);
  return value;
}

/** A default in ms as the seconds a flag takes (e.g. 30000 → "30"). */
export const secondsOf = (ms: number): string => String(ms / 1000);

/** A flag of seconds above 0. @throws UsageError naming the flag otherwise. */
export function positiveSeconds(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new UsageError(`${flag} must be a number of seconds > 0, got "${text}"`);
  return value;
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
