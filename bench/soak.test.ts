import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeSoakResult } from "./soak.js";

describe("writeSoakResult", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("makes the result's directory when it does not exist yet (bench/results/ of a fresh checkout)", async () => {
    dir = await mkdtemp(join(tmpdir(), "soak-out-"));
    const out = join(dir, "bench", "results", "soak.json");
    await writeSoakResult(out, { duplicateArmWrites: 0 });
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual({ duplicateArmWrites: 0 });
  });
});
