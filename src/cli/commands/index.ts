import type { CliCommand } from "../command.js";

/** A subcommand by name, and how to import its module (with everything that module imports). */
export interface CommandEntry {
  name: string;
  load: () => Promise<CliCommand>;
}

/**
 * Every subcommand, registered in this one place, in the order `--help` lists them. A module is
 * imported only when its command runs (or for the program's own `--help`): `run` never loads the
 * chart renderer, the progress bars, the emulator or the demo's control plane.
 */
export const commands: readonly CommandEntry[] = [
  { name: "run", load: async () => (await import("./run.js")).runCommand },
  { name: "size", load: async () => (await import("./size.js")).sizeCommand },
  { name: "recommend", load: async () => (await import("./recommend.js")).recommendCommand },
  { name: "check", load: async () => (await import("./check.js")).checkCommand },
  { name: "simulate", load: async () => (await import("./simulate.js")).simulateCommand },
  { name: "demo", load: async () => (await import("./demo.js")).demoCommand },
  { name: "emulator", load: async () => (await import("./emulator.js")).emulatorCommand },
];
