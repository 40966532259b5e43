import type { CliCommand } from "../command.js";
import { demoCommand } from "./demo.js";
import { emulatorCommand } from "./emulator.js";
import { recommendCommand } from "./recommend.js";
import { runCommand } from "./run.js";
import { simulateCommand } from "./simulate.js";
import { sizeCommand } from "./size.js";

/** Every subcommand, registered in this one place, in the order `--help` lists them. */
export const commands: readonly CliCommand[] = [
  runCommand,
  sizeCommand,
  recommendCommand,
  simulateCommand,
  demoCommand,
  emulatorCommand,
];
