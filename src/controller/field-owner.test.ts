import { describe, expect, it } from "vitest";
import type { FieldManager, FieldOwnership } from "../kube/workloads.js";
import {
  describeOwner,
  fieldWrite,
  handedBackFrom,
  ownedByOtherMessage,
  TAKE_FROM_ANNOTATION,
} from "./field-owner.js";

const SELF = "signalr-autoscaler";
const POLICY = "apps/chat";
const at = new Date("2026-03-02T10:00:00Z");
const ours: FieldManager = { manager: SELF, operation: "Apply", subresource: undefined, time: at };
const kubectlScale: FieldManager = {
  manager: "kubectl",
  operation: "Update",
  subresource: "scale",
  time: at,
};
const argo: FieldManager = {
  manager: "argocd-controller",
  operation: "Apply",
  subresource: undefined,
  time: at,
};
const oldSelf: FieldManager = { manager: SELF, operation: "Update", subresource: "scale", time: at };
const own = (managers: FieldManager[], appliedFor?: string): FieldOwnership => ({ managers, appliedFor });

describe("fieldWrite: who may write a sized field", () => {
  const cases: [string, FieldOwnership, string[], ReturnType<typeof fieldWrite>][] = [
    ["nobody else owns it", own([ours], POLICY), [], { write: "apply", force: false }],
    ["nobody owns it at all", own([]), [], { write: "apply", force: false }],
    [
      "the creator owns it and the operator never applied here: taken over",
      own([kubectlScale]),
      [],
      { write: "apply", force: true, from: ["kubectl"], why: "adopted" },
    ],
    [
      "the operator applied here for another policy: this one has not, so it takes over",
      own([argo], "other/chat"),
      [],
      { write: "apply", force: true, from: ["argocd-controller"], why: "adopted" },
    ],
    [
      "another manager took it after the operator applied: left alone",
      own([kubectlScale], POLICY),
      [],
      { write: "none", owners: [kubectlScale] },
    ],
    [
      "shared with another manager (same value applied by both): left alone",
      own([argo, ours], POLICY),
      [],
      { write: "none", owners: [argo] },
    ],
    [
      "the operator's own name on an Update entry (an older version's scale write) is another owner",
      own([oldSelf]),
      [],
      { write: "apply", force: true, from: [SELF], why: "adopted" },
    ],
    [
      "handed back from every other owner",
      own([kubectlScale], POLICY),
      ["kubectl"],
      { write: "apply", force: true, from: ["kubectl"], why: "handedBack" },
    ],
    [
      "handed back from one owner while another still owns it: left alone",
      own([kubectlScale, argo], POLICY),
      ["kubectl"],
      { write: "none", owners: [kubectlScale, argo] },
    ],
  ];
  for (const [label, ownership, handedBack, expected] of cases) {
    it(label, () => expect(fieldWrite(ownership, SELF, POLICY, handedBack)).toEqual(expected));
  }
});

describe("the hand-back annotation and the Conflict message", () => {
  it("reads the managers named, comma-separated, blanks dropped", () => {
    expect(handedBackFrom({ [TAKE_FROM_ANNOTATION]: " kubectl, argocd-controller,," })).toEqual([
      "kubectl",
      "argocd-controller",
    ]);
    expect(handedBackFrom(undefined)).toEqual([]);
    expect(handedBackFrom({ other: "kubectl" })).toEqual([]);
  });

  it("names the owner, how and when it wrote, and the command that hands the field back", () => {
    expect(describeOwner(kubectlScale)).toBe(
      "kubectl (Update through the scale subresource, 2026-03-02T10:00:00.000Z)",
    );
    const message = ownedByOtherMessage("spec.replicas", "Deployment chat-hub", [kubectlScale], {
      namespace: "apps",
      name: "chat",
    });
    expect(message).toMatch(/^spec\.replicas of Deployment chat-hub is owned by kubectl \(Update/);
    expect(message).toContain(
      `kubectl annotate capacitypolicy chat -n apps ${TAKE_FROM_ANNOTATION}=kubectl --overwrite`,
    );
  });
});
