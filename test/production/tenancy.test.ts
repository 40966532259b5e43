/**
 * Tenancy: a tenancy map (the `--tenancy-file` format) limits which Azure scopes each namespace's
 * policies may target. A policy outside its scopes is not acted on — Azure is not even read for
 * it — and says why in its status and an Event. Without the map the operator acts on policies of
 * the namespaces it watches, and never on those of other namespaces.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTenancy } from "../../src/controller/tenancy.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { adminClients, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import {
  condition,
  createPolicy,
  getPolicy,
  OTHER_SUB,
  policyManifest,
  SUB,
  signalrId,
  startFastEmulator,
  startOperator,
  type TestOperator,
} from "./support.js";

const FOREIGN_SUB = "44444444-4444-4444-4444-444444444444";
const UNWATCHED_SUB = "55555555-5555-5555-5555-555555555555";

let admin: KubeClients;
let emulator: RunningEmulator;
const running: TestOperator[] = [];

beforeAll(async () => {
  await ensureCrd();
  admin = adminClients();
  emulator = await startFastEmulator();
});

afterAll(async () => {
  for (const op of running) await op.stop();
  await emulator?.stop();
});

describe("tenancy", () => {
  it("acts only on policies inside their namespace's Azure scopes and reports the others; without the map, only in watched namespaces", async () => {
    const [chat, notify, other, unwatched] = await Promise.all(
      ["tn-chat", "tn-notify", "tn-other", "tn-unwatched"].map((p) => createNamespace(admin, p)),
    );
    const ids = {
      chatIn: signalrId("chat-in", "rg-chat", SUB),
      chatOut: signalrId("chat-out", "rg-billing", SUB),
      notifyIn: signalrId("notify-in", "rg-any", OTHER_SUB),
      notifyOut: signalrId("notify-out", "rg-any", FOREIGN_SUB),
      otherAny: signalrId("other-any", "rg-any", FOREIGN_SUB),
      unwatched: signalrId("unwatched", "rg-any", UNWATCHED_SUB),
    };
    for (const resourceId of Object.values(ids)) {
      emulator.control.addInstance({ resourceId, sku: "Premium_P1", units: 2, connections: 500 });
    }
    await createPolicy(admin, policyManifest(chat as string, "in", ids.chatIn));
    await createPolicy(admin, policyManifest(chat as string, "out", ids.chatOut));
    await createPolicy(admin, policyManifest(notify as string, "in", ids.notifyIn));
    await createPolicy(admin, policyManifest(notify as string, "out", ids.notifyOut));
    await createPolicy(admin, policyManifest(other as string, "any", ids.otherAny));
    await createPolicy(admin, policyManifest(unwatched as string, "any", ids.unwatched));

    // The map as an operator would write it in the file given to --tenancy-file.
    const tenancy = parseTenancy(
      [
        "namespaces:",
        `  ${chat}:`,
        `    - subscriptionId: ${SUB}`,
        "      resourceGroup: rg-chat",
        `  ${notify}:`,
        `    - subscriptionId: ${OTHER_SUB}`,
        "",
      ].join("\n"),
    );
    const op = await startOperator({
      kube: adminClients(),
      emulator,
      settings: { namespaces: [chat, notify, other] as string[], tenancy, identity: "tenancy-0" },
    });
    running.push(op);

    const ready = async (ns: string, name: string) =>
      eventually(
        async () => {
          const p = await getPolicy(admin, ns, name);
          expect(condition(p, "Ready")?.status).toBe("True");
          return p;
        },
        60_000,
        250,
      );
    const refused = async (ns: string, name: string) =>
      eventually(
        async () => {
          const c = condition(await getPolicy(admin, ns, name), "Ready");
          expect(c).toMatchObject({ status: "False", reason: "OutOfScope" });
          return c?.message ?? "";
        },
        60_000,
        250,
      );
    await ready(chat as string, "in");
    await ready(notify as string, "in");
    expect(await refused(chat as string, "out")).toBe(
      `namespace ${chat} may only target /subscriptions/${SUB}/resourceGroups/rg-chat; the policy targets /subscriptions/${SUB}/resourceGroups/rg-billing`,
    );
    expect(await refused(notify as string, "out")).toMatch(`may only target /subscriptions/${OTHER_SUB}`);
    expect(await refused(other as string, "any")).toBe(`namespace ${other} may not target any Azure scope`);
    await eventually(
      async () => {
        const events = await admin.core.listNamespacedEvent({ namespace: chat as string });
        expect(
          events.items.some(
            (e) => e.involvedObject.name === "out" && e.reason === "OutOfScope" && e.type === "Warning",
          ),
        ).toBe(true);
      },
      10_000,
      200,
    );

    // Out-of-scope targets are not read, let alone written: no metrics for them, no call to a
    // subscription that only they use, no update.
    const requests = emulator.control.requests();
    const outOfScope = [ids.chatOut, ids.notifyOut, ids.otherAny, ids.unwatched].map((id) =>
      id.toLowerCase(),
    );
    expect(requests.filter((r) => r.kind === "getBatch").length).toBeGreaterThan(0);
    for (const r of requests) {
      for (const id of r.resourceIds ?? []) expect(outOfScope).not.toContain(id.toLowerCase());
      expect(r.path.toLowerCase()).not.toContain("chat-out");
      expect(r.subscriptionId).not.toBe(FOREIGN_SUB);
      expect(r.subscriptionId).not.toBe(UNWATCHED_SUB);
      expect(r.method).not.toBe("PATCH");
    }
    expect(op.reports.filter((r) => r.result?.outcome === "outOfScope").length).toBeGreaterThanOrEqual(3);
    expect(op.reports.some((r) => r.policy.metadata.namespace === unwatched)).toBe(false);
    await op.stop();

    // Without a map: every target of a watched namespace is allowed; other namespaces are untouched.
    const open = await startOperator({
      kube: adminClients(),
      emulator,
      settings: { namespaces: [chat as string], identity: "tenancy-1" },
    });
    running.push(open);
    await ready(chat as string, "out");
    expect(open.reports.some((r) => r.policy.metadata.namespace !== chat)).toBe(false);
    const untouched = await getPolicy(admin, unwatched as string, "any");
    expect(untouched.status).toBeUndefined();
    expect(emulator.control.requests().some((r) => r.subscriptionId === UNWATCHED_SUB)).toBe(false);
  });
});
