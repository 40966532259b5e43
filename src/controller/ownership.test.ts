import { describe, expect, it } from "vitest";
import { API_VERSION, type CapacityPolicy, type CapacityPolicySpec, KIND } from "../api/index.js";
import { conflictedPass } from "../autoscale/pass.js";
import { baseSpec, spec } from "../autoscale/testing.js";
import { ClaimIndex, claimOwners, type Duplicate, duplicateConflict, policyClaims } from "./ownership.js";
import { withReady } from "./status.js";

const SUB = "00000000-0000-0000-0000-000000000000";
const idOf = (name: string, rg = "rg") =>
  `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.SignalRService/SignalR/${name}`;

interface Row {
  ns: string;
  name: string;
  /** creationTimestamp (seconds, as the API server stamps it); undefined: unset. */
  created?: string;
  instance: string;
  deployment?: string;
  hpa?: string;
  extra?: Partial<CapacityPolicySpec>;
}

function manifest(r: Row): CapacityPolicy {
  const s = spec({ target: { service: "SignalR", resourceId: r.instance } });
  const appServer = r.deployment
    ? {
        appServer: {
          deploymentName: r.deployment,
          ...(r.hpa ? { horizontalPodAutoscalerName: r.hpa } : {}),
          replicas: { min: 1, max: 10 },
        },
      }
    : {};
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace: r.ns, name: r.name, ...(r.created ? { creationTimestamp: r.created } : {}) },
    spec: { ...s, ...appServer, ...r.extra },
  } as CapacityPolicy;
}

const T = (s: number) => new Date(Date.UTC(2025, 5, 2, 12, 0, s)).toISOString().replace(".000", "");

describe("claimOwners: the oldest policy naming a target owns it", () => {
  const cases: {
    name: string;
    rows: Row[];
    tenancy?: Map<string, { subscriptionId: string; resourceGroup?: string }[]>;
    want: Record<string, Pick<Duplicate, "owner" | "kind">>;
  }[] = [
    {
      name: "one instance, two namespaces: the older owns, the copy is a duplicate",
      rows: [
        { ns: "copy", name: "chat", created: T(5), instance: idOf("chat") },
        { ns: "chat", name: "chat", created: T(1), instance: idOf("chat") },
      ],
      want: { "copy/chat": { owner: "chat/chat", kind: "instance" } },
    },
    {
      name: "resource IDs compare case-insensitively, as ARM compares them",
      rows: [
        { ns: "a", name: "p", created: T(1), instance: idOf("chat") },
        {
          ns: "b",
          name: "p",
          created: T(2),
          instance: idOf("chat").toUpperCase(),
        },
      ],
      want: { "b/p": { owner: "a/p", kind: "instance" } },
    },
    {
      name: "the same creation second: namespace/name breaks the tie",
      rows: [
        { ns: "b", name: "chat", created: T(1), instance: idOf("chat") },
        { ns: "a", name: "zz", created: T(1), instance: idOf("chat") },
        { ns: "a", name: "chat", created: T(1), instance: idOf("chat") },
      ],
      want: {
        "b/chat": { owner: "a/chat", kind: "instance" },
        "a/zz": { owner: "a/chat", kind: "instance" },
      },
    },
    {
      name: "no creation time: younger than any that has one",
      rows: [
        { ns: "a", name: "a", instance: idOf("chat") },
        { ns: "z", name: "z", created: T(59), instance: idOf("chat") },
      ],
      want: { "a/a": { owner: "z/z", kind: "instance" } },
    },
    {
      name: "two instances, one Deployment in one namespace: a Deployment duplicate",
      rows: [
        { ns: "chat", name: "east", created: T(1), instance: idOf("east"), deployment: "chat-hub" },
        { ns: "chat", name: "west", created: T(2), instance: idOf("west"), deployment: "chat-hub" },
      ],
      want: { "chat/west": { owner: "chat/east", kind: "deployment" } },
    },
    {
      name: "the same Deployment name in two namespaces is two Deployments",
      rows: [
        { ns: "a", name: "chat", created: T(1), instance: idOf("east"), deployment: "chat-hub" },
        { ns: "b", name: "chat", created: T(2), instance: idOf("west"), deployment: "chat-hub" },
      ],
      want: {},
    },
    {
      name: "one HPA over two Deployments: an HPA duplicate",
      rows: [
        { ns: "chat", name: "a", created: T(1), instance: idOf("east"), deployment: "hub-a", hpa: "hub" },
        { ns: "chat", name: "b", created: T(2), instance: idOf("west"), deployment: "hub-b", hpa: "hub" },
      ],
      want: { "chat/b": { owner: "chat/a", kind: "hpa" } },
    },
    {
      name: "sharing the instance and the Deployment names the instance",
      rows: [
        { ns: "chat", name: "a", created: T(1), instance: idOf("chat"), deployment: "chat-hub" },
        { ns: "chat", name: "b", created: T(2), instance: idOf("chat"), deployment: "chat-hub" },
      ],
      want: { "chat/b": { owner: "chat/a", kind: "instance" } },
    },
    {
      name: "three on one instance: both younger ones name the oldest",
      rows: [
        { ns: "a", name: "p", created: T(3), instance: idOf("chat") },
        { ns: "b", name: "p", created: T(1), instance: idOf("chat") },
        { ns: "c", name: "p", created: T(2), instance: idOf("chat") },
      ],
      want: { "a/p": { owner: "b/p", kind: "instance" }, "c/p": { owner: "b/p", kind: "instance" } },
    },
    {
      name: "an older policy with an invalid spec claims nothing",
      rows: [
        {
          ns: "a",
          name: "bad",
          created: T(1),
          instance: idOf("chat"),
          extra: { units: { min: 50, max: 10 } },
        },
        { ns: "b", name: "good", created: T(2), instance: idOf("chat") },
      ],
      want: {},
    },
    {
      name: "an older policy outside its namespace's scopes claims nothing",
      rows: [
        { ns: "other", name: "p", created: T(1), instance: idOf("chat") },
        { ns: "chat", name: "p", created: T(2), instance: idOf("chat") },
      ],
      tenancy: new Map([
        ["chat", [{ subscriptionId: SUB }]],
        ["other", [{ subscriptionId: "11111111-1111-1111-1111-111111111111" }]],
      ]),
      want: {},
    },
    {
      name: "each claim has its own owner: a duplicate still holds the Deployment it names",
      rows: [
        { ns: "chat", name: "x", created: T(1), instance: idOf("one") },
        { ns: "chat", name: "a", created: T(2), instance: idOf("one"), deployment: "chat-hub" },
        { ns: "chat", name: "c", created: T(3), instance: idOf("two"), deployment: "chat-hub" },
      ],
      want: {
        "chat/a": { owner: "chat/x", kind: "instance" },
        "chat/c": { owner: "chat/a", kind: "deployment" },
      },
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const got = claimOwners(c.rows.map((r) => policyClaims(manifest(r), c.tenancy)));
      const summary = Object.fromEntries([...got].map(([k, d]) => [k, { owner: d.owner, kind: d.kind }]));
      expect(summary).toEqual(c.want);
    });
  }

  it("names the target as the owner spells it", () => {
    const got = claimOwners(
      [
        { ns: "a", name: "p", created: T(1), instance: idOf("Chat", "RG-Chat") },
        { ns: "b", name: "p", created: T(2), instance: idOf("chat", "rg-chat") },
      ].map((r) => policyClaims(manifest(r))),
    );
    expect(got.get("b/p")?.target).toBe(`SignalR instance ${idOf("Chat", "RG-Chat")}`);
    const { reason, message } = duplicateConflict(got.get("b/p") as Duplicate);
    expect(reason).toBe("DuplicatePolicy");
    expect(message).toContain("CapacityPolicy a/p already manages the SignalR instance");
    expect(message).toContain("sends nothing to Azure");
  });
});

describe("ClaimIndex: verdicts rebuilt from watch events", () => {
  const row = (name: string, created: number, instance = idOf("chat")): Row => ({
    ns: "chat",
    name,
    created: T(created),
    instance,
  });

  it("reports whose verdict changed: a duplicate, then its owner deleted, then an older one retargeted onto it", () => {
    const index = new ClaimIndex();
    index.set(policyClaims(manifest(row("a", 1))));
    index.set(policyClaims(manifest(row("b", 2))));
    expect(index.refresh()).toEqual(["chat/b"]);
    expect(index.duplicateOf("chat/b")?.owner).toBe("chat/a");
    expect(index.duplicateOf("chat/a")).toBeUndefined();

    // A status update of the owner (same claims): nothing rebuilt, nothing changed.
    index.set(policyClaims(manifest(row("a", 1))));
    expect(index.refresh()).toEqual([]);

    // The owner is retargeted: b takes over.
    index.set(policyClaims(manifest(row("a", 1, idOf("other")))));
    expect(index.refresh()).toEqual(["chat/b"]);
    expect(index.duplicateOf("chat/b")).toBeUndefined();

    // ... and retargeted back: b is a duplicate again.
    index.set(policyClaims(manifest(row("a", 1))));
    expect(index.refresh()).toEqual(["chat/b"]);

    // A third, younger one; then the owner is deleted: the next oldest (b) owns, c names b now.
    index.set(policyClaims(manifest(row("c", 3))));
    expect(index.refresh()).toEqual(["chat/c"]);
    index.delete("chat/a");
    expect(index.refresh().sort()).toEqual(["chat/b", "chat/c"]);
    expect(index.duplicateOf("chat/b")).toBeUndefined();
    expect(index.duplicateOf("chat/c")?.owner).toBe("chat/b");

    // Deleting a duplicate changes no one else's verdict.
    index.delete("chat/c");
    expect(index.refresh()).toEqual([]);
  });

  it("1,000 policies on 100 instances: one owner each, the rest name it", () => {
    const index = new ClaimIndex();
    for (let i = 0; i < 1000; i++) {
      index.set(
        policyClaims(
          manifest({
            ns: `ns-${i % 10}`,
            name: `p-${i}`,
            created: T(i % 60),
            instance: idOf(`chat-${i % 100}`),
          }),
        ),
      );
    }
    expect(index.refresh()).toHaveLength(900);
    for (let i = 0; i < 100; i++) {
      // Instance i is named by p-i, p-(i+100), …; the oldest second, then namespace/name, wins.
      const named = Array.from({ length: 10 }, (_, j) => i + 100 * j);
      const owner = named
        .map((n) => ({ key: `ns-${n % 10}/p-${n}`, created: n % 60 }))
        .sort((x, y) => x.created - y.created || (x.key < y.key ? -1 : 1))[0]?.key as string;
      expect(index.duplicateOf(owner)).toBeUndefined();
      for (const n of named) {
        const key = `ns-${n % 10}/p-${n}`;
        if (key !== owner) expect(index.duplicateOf(key)?.owner).toBe(owner);
      }
    }
  });
});

describe("conflictedPass: a duplicate's write", () => {
  it("Conflict=True with the reason, Ready=False (Conflict, stalled), no decision left in status", () => {
    const conflict = { reason: "DuplicatePolicy", message: "CapacityPolicy chat/a already manages …" };
    const write = conflictedPass(4, conflict, 30_000);
    expect(write.outcome).toBe("duplicate");
    expect(write.patch).toEqual({ observedGeneration: 4, desired: null, lastReasons: null });
    expect(write.events).toEqual([]);
    expect(write.decision).toBeUndefined();
    const out = withReady(write.drafts, write.blocker, false);
    const get = (type: string) => out.find((c) => c.type === type);
    expect(get("Conflict")).toMatchObject({
      status: "True",
      reason: "DuplicatePolicy",
      message: conflict.message,
    });
    expect(get("Ready")).toMatchObject({ status: "False", reason: "Conflict", message: conflict.message });
    expect(get("AbleToScale")).toMatchObject({ status: "False", reason: "Conflict" });
    expect(get("MetricsAvailable")).toMatchObject({ status: "Unknown" });
    expect(get("Stalled")).toMatchObject({ status: "True", reason: "Conflict" });
    expect(out).toHaveLength(10);
  });
});

// The base spec the rows build on is valid on its own (else every case would claim nothing).
it("the rows' base spec is valid", () => {
  expect(
    policyClaims(manifest({ ns: "a", name: "p", instance: baseSpec().target.resourceId })).claims,
  ).toHaveLength(1);
});
