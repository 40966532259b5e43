import { Command, CommanderError } from "commander";
import { commands } from "./commands/index.js";
import { ExitCode, formatCliError, UsageError } from "./errors.js";
import type { CliIo } from "./io.js";

/** Builds the commander program with every subcommand registered. */
function buildProgram(io: CliIo): Command {
  const program = new Command("signalr-autoscaler")
    .description(
      "Autoscales Azure SignalR Service and Azure Web PubSub from measured load and the published tier tables.",
    )
    .version(VERSION, "--version")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const command of commands) command.register(program, io);
  for (const sub of program.commands) {
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  }
  return program;
}

const VERSION = "0.1.0";

/**
 * Runs the CLI with `argv` (without the node and script entries) and returns the exit code:
 * 0 on success, 2 on bad usage ({@link UsageError} or a flag error), 1 on any other failure.
 * Errors are printed as one line, credentials redacted; the stack trace only with `--verbose`.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  const verbose = argv.includes("--verbose") || argv.includes("-v");
  try {
    await program.parseAsync([...argv], { from: "user" });
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return ExitCode.ok;
      if (err.code === "commander.help") return ExitCode.ok;
      // commander has already printed its message.
      return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    io.stderr(formatCliError(err, verbose));
    return err instanceof UsageError ? ExitCode.usage : ExitCode.failure;
  }
}
