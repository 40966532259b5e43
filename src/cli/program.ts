import { Command, CommanderError } from "commander";
import { VERSION } from "../shared/version.js";
import { commands } from "./commands/index.js";
import { ExitCode, ExitStatus, formatCliError, UsageError } from "./errors.js";
import type { CliIo } from "./io.js";

/**
 * The subcommand `argv` names: its first word that is not a flag (the program's own flags take no
 * value), when it is a known command; undefined otherwise (`--help`, `help run`, a typo).
 */
function commandNamed(argv: readonly string[]): string | undefined {
  const word = argv.find((a) => !a.startsWith("-"));
  return commands.some((c) => c.name === word) ? word : undefined;
}

/**
 * Builds the commander program: with only the subcommand `argv` names when it names one (its
 * module alone is imported), none for the program's `--version`, else every subcommand (for
 * `--help` and usage errors).
 */
async function buildProgram(argv: readonly string[], io: CliIo): Promise<Command> {
  const program = new Command("signalr-autoscaler")
    .description(
      "Autoscales Azure SignalR Service and Azure Web PubSub from measured load and the published tier tables.",
    )
    .version(VERSION, "--version")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  const named = commandNamed(argv);
  const wanted = commands.filter((c) =>
    named === undefined ? !argv.includes("--version") : c.name === named,
  );
  for (const command of await Promise.all(wanted.map((c) => c.load()))) command.register(program, io);
  for (const sub of program.commands) {
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  }
  return program;
}

/**
 * Runs the CLI with `argv` (without the node and script entries) and returns the exit code:
 * 0 on success, 2 on bad usage ({@link UsageError} or a flag error), a command's own code
 * ({@link ExitStatus}: it printed its result), 1 on any other failure.
 * Errors are printed as one line, credentials redacted; the stack trace only with `--verbose`.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const verbose = argv.includes("--verbose") || argv.includes("-v");
  try {
    const program = await buildProgram(argv, io);
    await program.parseAsync([...argv], { from: "user" });
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return ExitCode.ok;
      if (err.code === "commander.help") return ExitCode.ok;
      // commander has already printed its message.
      return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (err instanceof ExitStatus) return err.code;
    io.stderr(formatCliError(err, verbose));
    return err instanceof UsageError ? ExitCode.usage : ExitCode.failure;
  }
}
