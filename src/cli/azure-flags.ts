/**
 * The Azure connection flags `run`, `check` and `simulate --resource-id` share: endpoints, the CA
 * to trust and the credential, each with an environment variable as its default (the Deployment
 * in `deploy/` sets them); and the deadlines of one call and of one token request (`run`,
 * `check`).
 */
import type { TokenCredential } from "@azure/identity";
import { type Command, Option } from "commander";
import {
  type AzureConnection,
  createAzureCredential,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_TOKEN_TIMEOUT_MS,
} from "../azure/index.js";
import type { Logger } from "../controller/logging.js";
import { UsageError } from "./errors.js";
import { positiveSeconds, readFlagText, secondsOf } from "./flags.js";

/** The flags' values. */
export interface AzureFlags {
  armEndpoint?: string;
  metricsEndpoint?: string;
  caFile?: string;
  azureCredential: "auto" | "static";
}

/** Adds `--arm-endpoint`, `--metrics-endpoint`, `--ca-file` and `--azure-credential` to `cmd`. */
export function azureOptions(cmd: Command, env: Readonly<Record<string, string | undefined>>): Command {
  return cmd
    .option(
      "--arm-endpoint <url>",
      "Azure Resource Manager endpoint (default public cloud)",
      env["AZURE_ARM_ENDPOINT"],
    )
    .option(
      "--metrics-endpoint <url>",
      "metrics data-plane endpoint; {region} is replaced (default https://{region}.metrics.monitor.azure.com)",
      env["AZURE_METRICS_ENDPOINT"],
    )
    .option(
      "--ca-file <file>",
      "extra CA certificate (PEM) to trust for Azure endpoints (the emulator's)",
      env["AZURE_CA_FILE"],
    )
    .addOption(
      new Option(
        "--azure-credential <kind>",
        "auto: workload identity or the default chain; static: emulator only",
      )
        .choices(["auto", "static"])
        .default(env["AZURE_CREDENTIAL"] ?? "auto"),
    );
}

/** The deadline flags' values, seconds as typed. */
export interface AzureTimeoutFlags {
  azureRequestTimeout: string;
  azureTokenTimeout: string;
}

/** Adds `--azure-request-timeout` and `--azure-token-timeout` (defaults: the adapters' own). */
export function azureTimeoutOptions(
  cmd: Command,
  env: Readonly<Record<string, string | undefined>>,
): Command {
  return cmd
    .option(
      "--azure-request-timeout <seconds>",
      "deadline of one HTTP call to ARM or Azure Monitor",
      env["AZURE_REQUEST_TIMEOUT"] ?? secondsOf(DEFAULT_REQUEST_TIMEOUT_MS),
    )
    .option(
      "--azure-token-timeout <seconds>",
      "deadline of one token request to Microsoft Entra ID (or the managed identity endpoint)",
      env["AZURE_TOKEN_TIMEOUT"] ?? secondsOf(DEFAULT_TOKEN_TIMEOUT_MS),
    );
}

/**
 * The deadlines the flags give, ms.
 * @throws UsageError for a value that is not a number of seconds above 0.
 */
export function azureTimeouts(flags: AzureTimeoutFlags): {
  requestTimeoutMs: number;
  tokenTimeoutMs: number;
} {
  return {
    requestTimeoutMs: positiveSeconds(flags.azureRequestTimeout, "--azure-request-timeout") * 1000,
    tokenTimeoutMs: positiveSeconds(flags.azureTokenTimeout, "--azure-token-timeout") * 1000,
  };
}

/** A credential that hands out a fixed token: only for an emulator (the real ARM refuses it). */
function staticCredential(token = "signalr-autoscaler-emulator"): TokenCredential {
  return { getToken: async () => ({ token, expiresOnTimestamp: Date.now() + 3_600_000 }) };
}

/** Turns `https://{region}.example` into a function of the region. */
function metricsEndpointTemplate(template: string): (region: string) => string {
  if (!/^https:\/\//.test(template))
    throw new UsageError(`--metrics-endpoint must be an https URL, got "${template}"`);
  return (region) => template.replaceAll("{region}", region);
}

/**
 * The connection the flags describe, and a description of its credential for the log.
 * @throws UsageError for a static credential without `--arm-endpoint`, a metrics endpoint that is
 *   not https, or a CA file that cannot be read.
 */
export async function azureConnection(
  flags: AzureFlags,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<{ connection: AzureConnection; credential: string }> {
  let credential: TokenCredential;
  let description: string;
  if (flags.azureCredential === "static") {
    if (!flags.armEndpoint)
      throw new UsageError("--azure-credential static is only for an emulator: give --arm-endpoint");
    credential = staticCredential();
    description = "static token (emulator)";
  } else {
    const created = createAzureCredential(env);
    credential = created.credential;
    description = created.description;
  }
  const ca = flags.caFile ? await readFlagText(flags.caFile, "--ca-file", cwd) : undefined;
  return {
    connection: {
      credential,
      ...(flags.armEndpoint ? { armEndpoint: flags.armEndpoint } : {}),
      ...(flags.metricsEndpoint ? { metricsEndpoint: metricsEndpointTemplate(flags.metricsEndpoint) } : {}),
      ...(ca !== undefined ? { ca } : {}),
    },
    credential: description,
  };
}

/**
 * Logs which credential the operator uses, from {@link azureConnection}'s description (the source
 * and the client ID, never a secret). Its key is not `credential`: the log's redaction blanks the
 * value of any member whose name ends in "credential".
 */
export function logCredential(log: Logger, description: string): void {
  log.info({ credentialSource: description }, "Azure credential");
}
