import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readPackageVersion, VERSION } from "./version.js";

const ROOT = resolve(import.meta.dirname, "../..");

describe("the release version", () => {
  it("is package.json's", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });

  it("comes from the nearest package.json named signalr-autoscaler above the module", async () => {
    const dir = await mkdtemp(join(tmpdir(), "signalr-autoscaler-version-"));
    try {
      await writeFile(
        join(dir, "package.json"),
        JSON.stringify({ name: "signalr-autoscaler", version: "9.8.7" }),
      );
      await mkdir(join(dir, "chunks", "other"), { recursive: true });
      // Another package's manifest on the way up is passed over.
      await writeFile(
        join(dir, "chunks", "package.json"),
        JSON.stringify({ name: "other", version: "1.0.0" }),
      );
      expect(readPackageVersion(join(dir, "chunks", "other"))).toBe("9.8.7");
      await rm(join(dir, "package.json"));
      expect(() => readPackageVersion(join(dir, "chunks"))).toThrow(/no package.json of signalr-autoscaler/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
