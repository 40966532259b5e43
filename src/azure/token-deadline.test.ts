import type { TokenCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import { classifyAzureError } from "./classify-error.js";
import { AuthenticationError } from "./errors.js";
import { type TokenRequestObservation, withTokenDeadline } from "./token-deadline.js";

const never: TokenCredential = { getToken: () => new Promise(() => {}) };

describe("withTokenDeadline", () => {
  it("fails a token request that never settles at its deadline, as CredentialUnavailable", async () => {
    const seen: TokenRequestObservation[] = [];
    const bounded = withTokenDeadline(never, { timeoutMs: 50, observe: (o) => seen.push(o) });
    const started = performance.now();
    const err = await bounded.getToken("https://management.azure.com/.default").catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((err as Error).name).toBe("CredentialUnavailableError");
    expect((err as Error).message).toBe(
      "no token within 0.05 s: the identity endpoint did not answer in time",
    );
    expect(seen).toEqual([{ outcome: "timeout", status: 0, seconds: expect.any(Number) }]);
    const typed = classifyAzureError(err, { operation: "instances.get", now: new Date(0) });
    expect(typed).toBeInstanceOf(AuthenticationError);
    expect(typed?.code).toBe("CredentialUnavailable");
  });

  it("passes the deadline to the credential as its abort signal, and the token through", async () => {
    let signal: AbortSignal | undefined;
    const seen: TokenRequestObservation[] = [];
    const bounded = withTokenDeadline(
      {
        getToken: async (_scopes, options) => {
          signal = options?.abortSignal as AbortSignal | undefined;
          return { token: "t", expiresOnTimestamp: 1 };
        },
      },
      { timeoutMs: 10_000, observe: (o) => seen.push(o) },
    );
    await expect(bounded.getToken("s")).resolves.toEqual({ token: "t", expiresOnTimestamp: 1 });
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal?.aborted).toBe(false);
    expect(seen[0]?.outcome).toBe("success");
  });

  it("keeps the credential's own failure and its status; rethrows the caller's abort", async () => {
    const refusal = Object.assign(new Error("AADSTS7000215: Invalid client secret provided."), {
      name: "AuthenticationError",
      statusCode: 401,
    });
    const seen: TokenRequestObservation[] = [];
    const failing = withTokenDeadline(
      {
        getToken: async () => {
          throw refusal;
        },
      },
      { timeoutMs: 1_000, observe: (o) => seen.push(o) },
    );
    await expect(failing.getToken("s")).rejects.toBe(refusal);
    expect(seen[0]).toMatchObject({ outcome: "failure", status: 401 });

    const caller = new AbortController();
    const reason = new Error("stopping");
    const pending = withTokenDeadline(never, { timeoutMs: 10_000 }).getToken("s", {
      abortSignal: caller.signal,
    });
    caller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("refuses a timeout that is not positive", () => {
    expect(() => withTokenDeadline(never, { timeoutMs: 0 })).toThrow(RangeError);
  });
});
