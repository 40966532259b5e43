/**
 * Request and response values exchanged between the emulator's HTTPS server and its handlers
 * (ARM, metrics, control), and ARM-shaped error bodies.
 */

/** A parsed request. */
export interface EmulatorRequest {
  method: string;
  /** Decoded URL path, without query. */
  path: string;
  /** Query parameters; look them up with {@link queryParam} (names are case-insensitive in Azure). */
  query: URLSearchParams;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Parsed JSON body, `undefined` when empty; {@link INVALID_JSON} when not JSON. */
  body: unknown;
  /** `https://host:port` of the emulator, for absolute URLs in responses. */
  baseUrl: string;
}

/** Marker for a body that is not valid JSON. */
export const INVALID_JSON: unique symbol = Symbol("invalid JSON");

/** A response to write. */
export interface EmulatorResponse {
  status: number;
  headers?: Record<string, string>;
  /** Serialized as JSON; no body when `undefined`. */
  body?: unknown;
  /** A text body sent as is, instead of `body` (its `content-type` goes in `headers`). */
  text?: string;
}

/** True for a JSON object (not an array, not `null`). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A query parameter by case-insensitive name. */
export function queryParam(query: URLSearchParams, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [k, v] of query) if (k.toLowerCase() === wanted) return v;
  return undefined;
}

/** A JSON response. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): EmulatorResponse {
  return { status, body, headers };
}

/** The optional fields of an ARM error (common-types `ErrorDetail`). */
export interface ArmErrorExtra {
  target?: string;
  details?: { code: string; message: string; target?: string }[];
  additionalInfo?: { type: string; info: Record<string, unknown> }[];
}

/** An ARM error response: `{ "error": { "code", "message", target?, details?, additionalInfo? } }`. */
export function armError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
  extra: ArmErrorExtra = {},
): EmulatorResponse {
  return { status, headers, body: { error: { code, message, ...extra } } };
}

/** Formats a time as ARM does: ISO 8601 UTC without milliseconds when they are 0. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/**
 * One page of an ARM list: `{ value }` from `$skipToken` (an offset), with a `nextLink` (this URL
 * with the next offset) while items are left.
 */
export function page<T>(
  req: EmulatorRequest,
  items: readonly T[],
  pageSize: number,
): Record<string, unknown> {
  const skip = Number(queryParam(req.query, "$skipToken") ?? "0");
  const from = Number.isInteger(skip) && skip > 0 ? skip : 0;
  const value = items.slice(from, from + pageSize);
  const next = from + pageSize < items.length ? from + pageSize : undefined;
  if (next === undefined) return { value };
  const q = new URLSearchParams(req.query);
  for (const k of [...q.keys()]) if (k.toLowerCase() === "$skiptoken") q.delete(k);
  q.set("$skipToken", String(next));
  return { value, nextLink: `${req.baseUrl}${req.path}?${q.toString()}` };
}
