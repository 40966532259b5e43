/**
 * The contract between the program and its subcommands: what a subcommand module exposes and the
 * options every subcommand accepts. `program.ts` registers the commands of `commands/`; each
 * command builds on this module, never on the program.
 */
import { type Command, Option } from "commander";
import type { CliIo } from "./io.js";
import type { OutputFormat } from "./output.js";

/** Options every subcommand accepts. */
export interface CommonOptions {
  output: OutputFormat;
  verbose: boolean;
}

/** What a subcommand module exposes: it adds itself, with its flags and action, to the program. */
export interface CliCommand {
  register(program: Command, io: CliIo): void;
}

/** Adds `--output table|json` and `--verbose` to a subcommand. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("-o, --output <format>", "output format").choices(["table", "json"]).default("table"),
    )
    .option("-v, --verbose", "print stack traces and more detail on errors", false);
}
