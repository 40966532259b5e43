/**
 * The operator's logger: one pino root logger built at start and handed down; passes take a child
 * logger with the policy's namespace and name. Tokens, secrets, keys and connection strings are
 * redacted wherever they appear in a logged object: by field name, and in every line's text (error
 * messages and stacks included) through `scrubSecrets`, the redaction of every output surface.
 */
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { scrubSecrets } from "../shared/redact.js";

export type { Logger } from "pino";
export { scrubSecrets } from "../shared/redact.js";

/** Log levels the `--log-level` flag accepts. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Paths pino censors, at any depth we log (headers, credentials, kubeconfig users, …). */
const REDACT_PATHS: readonly string[] = [
  "token",
  "accessToken",
  "access_token",
  "refreshToken",
  "clientSecret",
  "client_secret",
  "password",
  "secret",
  "connectionString",
  "authorization",
  "Authorization",
  "headers.authorization",
  "headers.Authorization",
  "*.token",
  "*.accessToken",
  "*.clientSecret",
  "*.password",
  "*.secret",
  "*.connectionString",
  "*.authorization",
  "*.Authorization",
  "*.headers.authorization",
  "*.headers.Authorization",
  "*.*.token",
  "*.*.password",
  "*.*.authorization",
];

/** Options of {@link createLogger}. */
export interface LoggerSettings {
  level: LogLevel;
  /**
   * Where the lines go: stdout by default, one JSON object per line; {@link prettyDestination} for
   * people; a capture in tests.
   */
  destination?: DestinationStream;
}

/** Builds the root logger. Call once at start. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { component: "signalr-autoscaler" },
    redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
    // The whole line, messages and error stacks included, goes through the one redaction.
    hooks: { streamWrite: scrubSecrets },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/**
 * Human-readable lines on stdout: pino-pretty as a stream in this thread (not a worker transport,
 * which loads the package by name from node_modules — a bundle has none), imported only when asked.
 */
export async function prettyDestination(): Promise<DestinationStream> {
  const { default: pretty } = await import("pino-pretty");
  return pretty({ colorize: false });
}
