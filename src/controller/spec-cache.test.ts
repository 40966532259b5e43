import { describe, expect, it } from "vitest";
import { API_VERSION, type CapacityPolicy, KIND, validatePolicy } from "../api/index.js";
import { spec } from "../autoscale/testing.js";
import { SpecCache } from "./spec-cache.js";

const ID =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";

function stored(generation: number | undefined, patch: Record<string, unknown> = {}): CapacityPolicy {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      namespace: "ns",
      name: "chat",
      ...(generation !== undefined ? { uid: "uid-1", generation } : {}),
      managedFields: [{ manager: "kubectl", operation: "Apply" }],
    },
    spec: { ...spec({ target: { service: "SignalR", resourceId: ID } }), ...patch },
    status: { observedGeneration: generation ?? 0 },
  } as CapacityPolicy;
}

describe("SpecCache", () => {
  it("validates a generation once: the status writes of its passes reuse the spec", () => {
    const cache = new SpecCache();
    const first = cache.validate(stored(3));
    // The next watch event: a new object, a new status, the same generation.
    const next = {
      ...stored(3),
      status: { observedGeneration: 3, desired: { sku: "Premium_P1", units: 20 } },
    };
    const again = cache.validate(next as CapacityPolicy);
    expect(first.ok).toBe(true);
    expect(again).toBe(first);
    expect(cache.size).toBe(1);
  });

  it("validates again when the generation changes, and keeps an invalid spec's errors the same way", () => {
    const cache = new SpecCache();
    const valid = cache.validate(stored(1));
    const invalid = cache.validate(stored(2, { units: { min: 20, max: 10 } }));
    expect(invalid).not.toBe(valid);
    expect(invalid.ok).toBe(false);
    expect(cache.validate(stored(2, { units: { min: 20, max: 10 } }))).toBe(invalid);
    expect(cache.validate(stored(3)).ok).toBe(true);
  });

  it("gives the same spec as validatePolicy, frozen so that no reader changes it for the others", () => {
    const cache = new SpecCache();
    const result = cache.validate(stored(1));
    const direct = validatePolicy(stored(1));
    if (!result.ok || !direct.ok) throw new Error("expected a valid spec");
    expect(result.spec).toEqual(direct.policy.spec);
    expect(Object.isFrozen(result.spec)).toBe(true);
    expect(Object.isFrozen(result.spec.units)).toBe(true);
    expect(() => {
      (result.spec.units as { max: number }).max = 1;
    }).toThrow(TypeError);
  });

  it("validates every time a policy without uid or generation (not from the API server)", () => {
    const cache = new SpecCache();
    const a = cache.validate(stored(undefined));
    const b = cache.validate(stored(undefined));
    expect(a).not.toBe(b);
    expect(a).toEqual(b);
    expect(cache.size).toBe(0);
  });

  it("judges the spec alone: the status and managedFields are not copied or validated", () => {
    const cache = new SpecCache();
    const odd = { ...stored(1), status: { observedGeneration: "not a number" } } as unknown as CapacityPolicy;
    expect(cache.validate(odd).ok).toBe(true);
    expect(validatePolicy(odd).ok).toBe(false);
  });

  it("forgets a deleted policy", () => {
    const cache = new SpecCache();
    const p = stored(1);
    cache.validate(p);
    cache.forget(p);
    expect(cache.size).toBe(0);
  });
});
