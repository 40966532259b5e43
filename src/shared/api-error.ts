/**
 * The base of the typed errors the Kubernetes and Azure adapters throw: what failed (`kind`, in
 * the PascalCase of Kubernetes reasons), the HTTP status, how long the server asked to wait, and
 * what was being done. Callers branch on `kind` (or the adapter's classes), never on HTTP details.
 */

/**
 * What failed, whichever API said so:
 *
 * | kind           | Kubernetes                                  | Azure                                              |
 * |----------------|---------------------------------------------|----------------------------------------------------|
 * | `NotFound`     | 404                                         | 404                                                |
 * | `Conflict`     | 409: stale resourceVersion, AlreadyExists   | 409, or a 429 whose code says an operation runs    |
 * | `Throttled`    | —                                           | 429 (and Monitor's 529)                            |
 * | `Unauthorized` | 401                                         | 401, 403, no token                                 |
 * | `Forbidden`    | 403                                         | —                                                  |
 * | `Gone`         | 410: resourceVersion too old                | —                                                  |
 * | `Invalid`      | 400, 422                                    | 400, 422, other 4xx                                |
 * | `Refused`      | —                                           | a durable refusal by code: quota, policy, lock     |
 * | `Transient`    | 408, 429, 5xx, timeouts, network errors     | 408, 5xx, timeouts, network errors                 |
 * | `Unknown`      | anything else                               | —                                                  |
 */
export type ApiErrorKind =
  | "NotFound"
  | "Conflict"
  | "Throttled"
  | "Unauthorized"
  | "Forbidden"
  | "Gone"
  | "Invalid"
  | "Refused"
  | "Transient"
  | "Unknown";

export interface ApiErrorInit {
  /** HTTP status; undefined when no response was received. */
  readonly status?: number | undefined;
  /** How long the server asked to wait before the next call, ms. */
  readonly retryAfterMs?: number | undefined;
  /** The adapter operation, e.g. `instances.get` or `patch status of capacitypolicies chat/chat`. */
  readonly operation?: string | undefined;
  readonly cause?: unknown;
}

export abstract class ApiError extends Error {
  abstract readonly kind: ApiErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly operation: string | undefined;

  constructor(message: string, init: ApiErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.operation = init.operation;
  }

  /** True when the same request may succeed later without any change. */
  get transient(): boolean {
    return this.kind === "Transient" || this.kind === "Throttled";
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a mixin's base takes any constructor arguments (TS2545)
type ApiErrorClass = abstract new (...args: any[]) => ApiError;

/**
 * `Base` with its `kind` fixed: an adapter declares one error class a kind as
 * `class GoneError extends withKind(KubeError, "Gone") {}`, with `Base`'s constructor.
 */
export function withKind<Base extends ApiErrorClass, const Kind extends ApiErrorKind>(
  base: Base,
  kind: Kind,
) {
  abstract class ErrorOfKind extends base {
    readonly kind = kind;
  }
  return ErrorOfKind;
}
