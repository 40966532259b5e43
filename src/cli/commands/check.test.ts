import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCaptured } from "../test-io.js";

const FIXTURES = resolve(import.meta.dirname, "../../../test/fixtures/recommend");
/** Azure flags of a connection nothing listens on: usage errors come before any call. */
const NOWHERE = ["--arm-endpoint", "https://127.0.0.1:1", "--azure-credential", "static"];
const ID =
  "/subscriptions/4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a/resourceGroups/chat-prod-rg/providers/Microsoft.SignalRService/SignalR/chat-prod-we";

describe("signalr-autoscaler check: usage", () => {
  it.each<[string, string[], string]>([
    [
      "neither --policy nor --resource-id",
      [],
      "error: give --policy FILE or --resource-id ID (one of them): the instance to check\n",
    ],
    [
      "both",
      ["--policy", "chat-policy.yaml", "--resource-id", ID],
      "error: give --policy FILE or --resource-id ID (one of them): the instance to check\n",
    ],
    [
      "a resource ID of another type",
      [
        "--resource-id",
        "/subscriptions/4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a/resourceGroups/rg/providers/Microsoft.Web/sites/app",
      ],
      'error: --resource-id: malformed resource ID "/subscriptions/4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a/resourceGroups/rg/providers/Microsoft.Web/sites/app"',
    ],
    [
      "a policy that does not parse",
      ["--policy", "bad-policy.yaml"],
      "error: policy bad-policy.yaml: spec.units: min (20) must be <= max (10)\n",
    ],
    ["a missing policy file", ["--policy", "nope.yaml"], "error: cannot read --policy nope.yaml: ENOENT\n"],
    [
      "a timeout that is no number of seconds",
      ["--resource-id", ID, "--azure-request-timeout", "soon"],
      'error: --azure-request-timeout must be a number of seconds > 0, got "soon"\n',
    ],
    [
      "a static credential without an emulator",
      ["--resource-id", ID, "--azure-credential", "static", "--arm-endpoint", ""],
      "error: --azure-credential static is only for an emulator: give --arm-endpoint\n",
    ],
  ])("exits 2 for %s, with one line and before any call", async (_name, argv, message) => {
    const r = await runCaptured(["check", ...NOWHERE, ...argv], FIXTURES);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.startsWith(message.trimEnd())).toBe(true);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it("lists its flags: the instance, --strict, and the Azure flags of run", async () => {
    const r = await runCaptured(["check", "--help"]);
    expect(r.code).toBe(0);
    const help = r.out.replace(/\s+/g, " ");
    for (const flag of [
      "--policy <file>",
      "--resource-id <id>",
      "--strict",
      "--arm-endpoint <url>",
      "--metrics-endpoint <url>",
      "--ca-file <file>",
      "--azure-credential <kind>",
      '--azure-request-timeout <seconds> deadline of one HTTP call to ARM or Azure Monitor (default: "30")',
      '--azure-token-timeout <seconds> deadline of one token request to Microsoft Entra ID (or the managed identity endpoint) (default: "10")',
    ]) {
      expect(help).toContain(flag);
    }
  });
});
