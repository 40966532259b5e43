/**
 * `signalr-autoscaler check`: the preflight a user runs on their own subscription before
 * `mode: Auto` — every read the operator makes for one instance, made once with the operator's
 * adapters and the same Azure flags as `run`, and one table of what Azure returned. Nothing is
 * written.
 *
 *     signalr-autoscaler check --policy chat.yaml
 *     signalr-autoscaler check --resource-id /subscriptions/…/providers/Microsoft.SignalRService/SignalR/chat
 *
 * Exit codes: 0 when no check failed (WARN rows included, unless `--strict`), 1 when one did (or,
 * with `--strict`, one warned), 2 for bad usage. The checks and their results: src/preflight/.
 */
import { parseResourceId, ResourceIdError } from "../../azure/index.js";
import {
  type PreflightRow,
  type PreflightTarget,
  preflightExitCode,
  preflightRows,
  preflightSummary,
  probeAzure,
} from "../../preflight/index.js";
import {
  type AzureFlags,
  type AzureTimeoutFlags,
  azureConnection,
  azureOptions,
  azureTimeoutOptions,
  azureTimeouts,
} from "../azure-flags.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { ExitStatus, UsageError } from "../errors.js";
import type { CliIo } from "../io.js";
import { formatJson, formatTable } from "../output.js";
import { readPolicyFile } from "../policy-file.js";

interface CheckFlags extends CommonOptions, AzureFlags, AzureTimeoutFlags {
  policy?: string;
  resourceId?: string;
  strict: boolean;
}

/** The instance the flags name, with its policy when `--policy` names one. */
async function targetOf(flags: CheckFlags, io: CliIo): Promise<PreflightTarget> {
  if ((flags.policy === undefined) === (flags.resourceId === undefined)) {
    throw new UsageError("give --policy FILE or --resource-id ID (one of them): the instance to check");
  }
  if (flags.policy !== undefined) {
    const policy = await readPolicyFile(flags.policy, io.cwd);
    return { resourceId: policy.spec.target.resourceId, service: policy.spec.target.service, policy };
  }
  try {
    const ref = parseResourceId(flags.resourceId as string);
    return { resourceId: ref.id, service: ref.service };
  } catch (err) {
    if (err instanceof ResourceIdError) throw new UsageError(`--resource-id: ${err.message}`);
    throw err;
  }
}

/** What `check -o json` prints. */
interface CheckReport {
  resourceId: string;
  service: string;
  policy: string | null;
  at: string;
  strict: boolean;
  rows: PreflightRow[];
  summary: ReturnType<typeof preflightSummary>;
  exitCode: number;
}

function render(r: CheckReport): string {
  const head = `check of ${r.resourceId} (${r.service})${r.policy ? `, policy ${r.policy}` : ""} at ${r.at}\n\n`;
  const table = formatTable(
    ["CHECK", "RESULT", "WHAT AZURE RETURNED / WHY"],
    r.rows.map((row) => [row.check, row.result, row.detail.join("\n")]),
  );
  const s = r.summary;
  const verdict =
    r.exitCode === 0
      ? s.WARN > 0
        ? "no check failed; read the WARN rows"
        : "the operator can read this instance; a write is not tried (locks, Azure Policy: see the SKIP row)"
      : s.FAIL > 0
        ? "fix the FAIL rows before mode: Auto"
        : "--strict: a WARN row counts as failed";
  return `${head}${table}\n${s.OK} OK, ${s.WARN} WARN, ${s.FAIL} FAIL, ${s.SKIP} SKIP: ${verdict} (exit ${r.exitCode})\n`;
}

async function check(flags: CheckFlags, io: CliIo): Promise<void> {
  const target = await targetOf(flags, io);
  const timeouts = azureTimeouts(flags);
  const { connection, credential } = await azureConnection(flags, io.env, io.cwd);
  const observations = await probeAzure(target, {
    connection: { ...connection, ...timeouts },
    now: () => Date.now(),
    signal: io.signal,
  });
  const rows = preflightRows(target, observations, { credential });
  const exitCode = preflightExitCode(rows, flags.strict);
  const policy = target.policy ? `${target.policy.metadata.namespace}/${target.policy.metadata.name}` : null;
  const report: CheckReport = {
    resourceId: target.resourceId,
    service: target.service,
    policy,
    at: new Date(observations.atMs).toISOString(),
    strict: flags.strict,
    rows,
    summary: preflightSummary(rows),
    exitCode,
  };
  io.stdout(flags.output === "json" ? formatJson(report) : render(report));
  if (exitCode !== 0) throw new ExitStatus(exitCode);
}

/** The `check` subcommand. */
export const checkCommand: CliCommand = defineCommand<CheckFlags>({
  name: "check",
  description:
    "Preflight before mode: Auto: make every read the operator makes for one instance (token, instance, listSkus, each metrics query, native autoscale settings) and read the region's unit quota, once and read-only, and print what Azure returned and which permissions it showed.",
  flags: (cmd, { env }) => {
    cmd
      .option("--policy <file>", "CapacityPolicy manifest (YAML or JSON) whose instance to check")
      .option("--resource-id <id>", "ARM resource ID of the SignalR or Web PubSub instance to check")
      .option("--strict", "exit 1 on a WARN row too", false);
    azureOptions(cmd, env);
    return azureTimeoutOptions(cmd, env);
  },
  examples: [
    "signalr-autoscaler check --policy chat.yaml",
    "signalr-autoscaler check --resource-id /subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.SignalRService/SignalR/<name> -o json",
  ],
  action: check,
});
