/**
 * `npm run bench`'s flags: `--help` prints them and exits 0; an unknown flag or a bad value is one
 * line on stderr and exit code 2 (as the CLI's usage errors) — in every case before the bench
 * starts anything (its first log line is the machine's description).
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

function bench(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "bench/control-loop.ts", ...argv],
      { cwd: ROOT, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? Number(err.code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("npm run bench: flags", () => {
  it("--help lists the flags and exits 0", async () => {
    const r = await bench("--help");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: npm run bench -- \[options\]/);
    for (const flag of ["--sizes", "--no-leading", "--operator-build", "--operator-node-options", "--help"])
      expect(r.stdout).toContain(flag);
    expect(r.stderr).toBe("");
    // One default per flag, and no path of this machine.
    const help = r.stdout.replace(/\s+/g, " ");
    expect(help).not.toMatch(/\(default[^)]*\) \(default/);
    expect(help).toContain("(default: bench/results/latest.json of the checkout)");
    expect(r.stdout).not.toContain(ROOT);
  }, 90_000);

  it.each([
    [["--bogus"], "error: unknown option '--bogus'\n"],
    [["--sizes", "0"], "error: --sizes must be whole numbers ≥ 1, comma-separated\n"],
    [["--poll", "0"], "error: --poll must be a whole number ≥ 1\n"],
    [
      ["--prometheus-servers", "x"],
      "error: --prometheus-servers must be a whole number ≥ 1 or per-namespace\n",
    ],
    [
      ["--operator-build", "docker"],
      /^error: option '--operator-build <build>' argument 'docker' is invalid/,
    ],
  ])(
    "%j: one line on stderr, exit code 2, nothing started",
    async (argv, message) => {
      const r = await bench(...argv);
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain("[bench");
      expect(r.stdout).toBe("");
    },
    90_000,
  );
});
