/**
 * What one poll cycle reads from Prometheus: for every due policy with a leading signal
 * (`spec.anticipation.leadingSignal`, mode not Off), one instant query at the operator's now, all
 * at once (the client bounds the calls per Prometheus server), each within the policy's
 * `prometheus.timeout` — credentials and CA included — so a slow or hanging Prometheus never holds
 * its policy's pass longer than that (the operator waits for each policy's own read only).
 * Successful readings are kept per policy for 30 minutes (`autoscale/leading.ts` pairs them with
 * Azure Monitor's buckets); a changed server, query or measure starts the list afresh. A failure
 * is handed to the pass as the reading's error (the signal is then ignored and reported); nothing
 * here throws.
 *
 * Credentials: `bearerTokenFile` is read at each query (projected tokens rotate);
 * `bearerTokenSecretRef` and `caSecretRef` are read from the policy's namespace and kept for
 * {@link SECRET_TTL_MS} (a failed read is not kept, nor one still unanswered after the policy's
 * timeout: the next cycle asks again); `useAzureCredential` asks the operator's Azure credential
 * for a token of {@link AZURE_PROMETHEUS_SCOPE} (the credential caches it until it nears expiry).
 * The token is never part of an error's message, even when a server's answer repeats it.
 */
import { readFile } from "node:fs/promises";
import type { TokenCredential } from "@azure/identity";
import { durationOr } from "../api/duration.js";
import type { LeadingSignalSpec } from "../api/index.js";
import { keepReading, type LeadingObservation, type LeadingReading } from "../autoscale/leading.js";
import { isPrometheusError, type PrometheusClient, type PrometheusServer } from "../prometheus/index.js";

/** The scope of Azure Monitor managed service for Prometheus query endpoints. */
export const AZURE_PROMETHEUS_SCOPE = "https://prometheus.monitor.azure.com/.default";
/** How long a Secret's key is kept before it is read again, ms. */
export const SECRET_TTL_MS = 60_000;

/** One policy's leading signal, as the cycle needs it. */
export interface LeadingTarget {
  /** Work-queue key (`namespace/name`). */
  key: string;
  namespace: string;
  spec: LeadingSignalSpec;
}

/** Where the reader gets what it needs. */
export interface LeadingReaderDeps {
  client: PrometheusClient;
  /** The operator's clock, ms since the epoch: readings are evaluated at this time. */
  now: () => number;
  /** Reads a Secret key (`kube/secrets.ts`). */
  readSecret?: (namespace: string, name: string, key: string) => Promise<string>;
  /** The operator's Azure credential (for `useAzureCredential`). */
  azureCredential?: TokenCredential;
  /** Reads a file of the operator's container (default: node:fs). */
  readFile?: (path: string) => Promise<string>;
  /**
   * Real elapsed time, ms (default `performance.now`): how long a Secret is kept and how much of
   * a deadline is left. Not the operator's clock, which may run faster than real time (the demo).
   */
  elapsed?: () => number;
}

/** Rejects with a Timeout-kind error when `work` takes longer than `ms`. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CredentialError("Timeout", `${what}: no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A credential or CA that could not be had. */
class CredentialError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The reason and message of a failed read. `token` (the one sent, if any) is cut out of the
 * message: a proxy's or a clone's error body may repeat the `Authorization` it was sent.
 */
function failureOf(err: unknown, token: string | undefined): { reason: string; message: string } {
  const redact = (message: string) => (token ? message.replaceAll(token, "[token]") : message).slice(0, 400);
  if (isPrometheusError(err)) return { reason: err.kind, message: redact(err.message) };
  if (err instanceof CredentialError) return { reason: err.reason, message: redact(err.message) };
  const message = err instanceof Error ? err.message : String(err);
  return { reason: "Credential", message: redact(message) };
}

export class LeadingReader {
  readonly #deps: LeadingReaderDeps;
  readonly #readings = new Map<string, { identity: string; readings: LeadingReading[] }>();
  readonly #secrets = new Map<string, { at: number; settled: boolean; value: Promise<string> }>();
  readonly #elapsed: () => number;

  constructor(deps: LeadingReaderDeps) {
    this.#deps = deps;
    this.#elapsed = deps.elapsed ?? (() => performance.now());
  }

  /** Reads every target's query at once; never rejects. */
  async read(targets: readonly LeadingTarget[]): Promise<Map<string, LeadingObservation>> {
    const out = new Map<string, LeadingObservation>();
    await Promise.all(
      targets.map(async (t) => {
        out.set(t.key, await this.readOne(t));
      }),
    );
    return out;
  }

  /**
   * Reads one target's query at the operator's now, within its timeout, and returns its readings
   * (this one included when it succeeded) and the failure, if any; never rejects.
   */
  async readOne(t: LeadingTarget): Promise<LeadingObservation> {
    const p = t.spec.prometheus;
    const identity = `${p.serverAddress}\n${p.query}\n${t.spec.measures}`;
    let kept = this.#readings.get(t.key);
    if (!kept || kept.identity !== identity) {
      kept = { identity, readings: [] };
      this.#readings.set(t.key, kept);
    }
    const nowMs = this.#deps.now();
    const timeoutMs = durationOr(p.timeout, 5) * 1000;
    const started = this.#elapsed();
    let token: string | undefined;
    try {
      const secrets = within(this.#credentials(t, timeoutMs), timeoutMs, "reading the credentials");
      const { bearerToken, caPem } = await secrets;
      token = bearerToken?.trim();
      const server: PrometheusServer = {
        url: p.serverAddress,
        timeoutMs: Math.max(1, timeoutMs - (this.#elapsed() - started)),
        ...(bearerToken !== undefined ? { bearerToken } : {}),
        ...(caPem !== undefined ? { caPem } : {}),
      };
      const sample = await this.#deps.client.query(server, p.query, { timeMs: nowMs });
      keepReading(kept.readings, { timeMs: sample.timeMs, value: sample.value }, nowMs);
      return { readings: [...kept.readings] };
    } catch (err) {
      keepReading(kept.readings, undefined, nowMs);
      return { readings: [...kept.readings], error: failureOf(err, token) };
    }
  }

  /** The token and CA of `t`; a Secret read pending longer than `timeoutMs` is asked again. */
  async #credentials(t: LeadingTarget, timeoutMs: number): Promise<{ bearerToken?: string; caPem?: string }> {
    const p = t.spec.prometheus;
    const out: { bearerToken?: string; caPem?: string } = {};
    const read = this.#deps.readFile ?? ((path: string) => readFile(path, "utf8"));
    if (p.bearerTokenFile !== undefined) {
      out.bearerToken = (
        await read(p.bearerTokenFile).catch((err: unknown) => {
          throw new CredentialError(
            "Credential",
            `bearerTokenFile ${p.bearerTokenFile}: ${(err as Error).message}`,
          );
        })
      ).trim();
    } else if (p.bearerTokenSecretRef) {
      out.bearerToken = (await this.#secret(t.namespace, p.bearerTokenSecretRef, timeoutMs)).trim();
    } else if (p.useAzureCredential) {
      const credential = this.#deps.azureCredential;
      if (!credential)
        throw new CredentialError("Credential", "useAzureCredential: the operator has no Azure credential");
      const token = await credential.getToken(AZURE_PROMETHEUS_SCOPE).catch((err: unknown) => {
        throw new CredentialError(
          "Credential",
          `Azure token for ${AZURE_PROMETHEUS_SCOPE}: ${(err as Error).message}`,
        );
      });
      if (!token)
        throw new CredentialError("Credential", `Azure token for ${AZURE_PROMETHEUS_SCOPE}: none returned`);
      out.bearerToken = token.token;
    }
    if (p.caFile !== undefined) {
      out.caPem = await read(p.caFile).catch((err: unknown) => {
        throw new CredentialError("Credential", `caFile ${p.caFile}: ${(err as Error).message}`);
      });
    } else if (p.caSecretRef) {
      out.caPem = await this.#secret(t.namespace, p.caSecretRef, timeoutMs);
    }
    return out;
  }

  /**
   * A Secret's key, kept for {@link SECRET_TTL_MS}; a failed read is not kept, and a read still
   * pending after `timeoutMs` (its caller has given up on it) is not shared: a new one starts.
   */
  #secret(namespace: string, ref: { name: string; key: string }, timeoutMs: number): Promise<string> {
    const readSecret = this.#deps.readSecret;
    if (!readSecret) {
      return Promise.reject(
        new CredentialError("Credential", `Secret ${namespace}/${ref.name}: no Kubernetes client`),
      );
    }
    const k = `${namespace}/${ref.name}/${ref.key}`;
    const now = this.#elapsed();
    const cached = this.#secrets.get(k);
    if (cached && now - cached.at < (cached.settled ? SECRET_TTL_MS : timeoutMs)) return cached.value;
    const entry = { at: now, settled: false, value: Promise.resolve("") };
    entry.value = readSecret(namespace, ref.name, ref.key).then(
      (v) => {
        entry.settled = true;
        return v;
      },
      (err: unknown) => {
        if (this.#secrets.get(k) === entry) this.#secrets.delete(k);
        throw new CredentialError("Credential", (err as Error).message);
      },
    );
    this.#secrets.set(k, entry);
    return entry.value;
  }

  /** Forgets a policy's readings (deleted, or its signal removed). */
  forget(key: string): void {
    this.#readings.delete(key);
  }

  /** Policies with readings kept. */
  get size(): number {
    return this.#readings.size;
  }
}
