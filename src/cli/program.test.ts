import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCaptured } from "./test-io.js";

const ROOT = resolve(import.meta.dirname, "../..");

describe("signalr-autoscaler", () => {
  it("--version prints package.json's version", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    const r = await runCaptured(["--version"]);
    expect(r).toEqual({ code: 0, out: `${pkg.version}\n`, err: "" });
  });

  it("an unknown command is one line on stderr and exit code 2", async () => {
    const r = await runCaptured(["scale-everything"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error: unknown command 'scale-everything'\n$/);
  }, 60_000);
});
