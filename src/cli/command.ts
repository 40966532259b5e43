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
function withCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("-o, --output <format>", "output format").choices(["table", "json"]).default("table"),
    )
    .option("-v, --verbose", "print stack traces and more detail on errors", false);
}

/** A subcommand, as {@link defineCommand} takes it. */
export interface CommandSpec<Flags extends CommonOptions> {
  name: string;
  description: string;
  /** Adds the command's own flags. */
  flags: (cmd: Command, io: CliIo) => Command;
  /** Where `--help` lists `--output` and `--verbose`: after the command's own flags (default) or before them. */
  commonOptions?: "first" | "last";
  /** Command lines of the `Examples:` section after the options in `--help`. */
  examples?: readonly string[];
  action: (flags: Flags, io: CliIo) => Promise<void>;
}

/** The subcommand of `spec`: its description, its flags and the common ones, its examples and its action. */
export function defineCommand<Flags extends CommonOptions>(spec: CommandSpec<Flags>): CliCommand {
  return {
    register(program, io) {
      const cmd = program.command(spec.name).description(spec.description);
      if (spec.commonOptions === "first") withCommonOptions(cmd);
      spec.flags(cmd, io);
      if (spec.commonOptions !== "first") withCommonOptions(cmd);
      if (spec.examples !== undefined) {
        cmd.addHelpText("after", `\nExamples:\n${spec.examples.map((line) => `  ${line}\n`).join("")}`);
      }
      cmd.action((flags: Flags) => spec.action(flags, io));
    },
  };
}
