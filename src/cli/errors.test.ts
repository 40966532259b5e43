import { describe, expect, it } from "vitest";
import { SECRET_SAMPLES } from "../shared/redact-samples.js";
import { ExitCode, formatCliError, UsageError } from "./errors.js";
import { runCaptured } from "./test-io.js";

describe("CLI errors", () => {
  it.each(SECRET_SAMPLES)("never print $name, with or without --verbose", ({ text, secret, kept }) => {
    for (const verbose of [false, true]) {
      const out = formatCliError(new Error(text), verbose);
      expect(out.startsWith("error: ")).toBe(true);
      expect(out).toContain(kept);
      expect(out).not.toContain(secret);
    }
    expect(formatCliError(text, false)).not.toContain(secret);
    expect(formatCliError(new UsageError(`bad flag: ${text}`), true)).not.toContain(secret);
  });

  it("prints the first line, and the stack only when verbose", () => {
    const err = new Error("first line\nsecond line");
    expect(formatCliError(err, false)).toBe("error: first line\n");
    expect(formatCliError(err, true)).toContain("at ");
  });

  it("reach stderr redacted from a failing command", async () => {
    // A file name that carries a connection string: the command's error names the file.
    const sample = SECRET_SAMPLES.find((s) => s.name.startsWith("AccessKey"));
    if (sample === undefined) throw new Error("no sample");
    const { code, err } = await runCaptured([
      "recommend",
      "--policy",
      `/nonexistent/${sample.text}`,
      "--metrics",
      "/nonexistent/metrics.json",
    ]);
    expect(code).toBe(ExitCode.usage);
    expect(err).toMatch(/^error: cannot read/);
    expect(err).toContain(sample.kept);
    expect(err).not.toContain(sample.secret);
  });
});
