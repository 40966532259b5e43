import { beforeAll, describe, expect, it } from "vitest";
import { runCaptured } from "../test-io.js";

const run = (...argv: string[]) => runCaptured(argv);

// The CLI imports the command's module when it runs: import it once here, outside the tests' time.
beforeAll(() => import("./run.js"), 60_000);

describe("signalr-autoscaler run: usage", () => {
  it("lists the leader election timings with client-go's defaults", async () => {
    const r = await run("run", "--help");
    expect(r.code).toBe(0);
    const help = r.out.replace(/\s+/g, " ");
    expect(help).toMatch(/--lease-duration <seconds> [^-]*\(default: "15"\)/);
    expect(help).toMatch(/--renew-deadline <seconds> [^-]*\(default: "10"\)/);
    expect(help).toMatch(/--retry-period <seconds> [^-]*\(default: "2"\)/);
  });

  it.each([
    [["--renew-deadline", "15"], "--renew-deadline must be shorter than --lease-duration"],
    [["--lease-duration", "4", "--renew-deadline", "3", "--retry-period", "3"], "--retry-period"],
    [["--lease-duration", "0"], "--lease-duration must be a number of seconds > 0"],
    [["--retry-period", "soon"], "--retry-period must be a number of seconds > 0"],
    [["--leader-elect"], "--leader-elect needs --lease-namespace"],
  ])("refuses %j before contacting anything", async (flags, message) => {
    const r = await run(
      "run",
      "--kubeconfig",
      "/nonexistent/kubeconfig",
      "--arm-endpoint",
      "https://127.0.0.1:1",
      "--azure-credential",
      "static",
      ...flags,
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });
});
