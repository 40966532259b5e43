import type { CliCommand } from "../program.js";
import { sizeCommand } from "./size.js";

/** Every subcommand, registered in this one place, in the order `--help` lists them. */
export const commands: readonly CliCommand[] = [sizeCommand];
