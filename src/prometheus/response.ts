/**
 * Reads the body of `/api/v1/query` into one sample, or the typed error that says why it cannot
 * be one. Pure.
 *
 * The API's envelope (Prometheus HTTP API, "Format overview" and "Instant queries"):
 * `{ status: "success" | "error", data?: { resultType, result }, errorType?, error?, warnings?, infos? }`.
 * Accepted results:
 * - `vector` with exactly one sample `{ metric: {labels}, value: [<unix seconds>, "<value>"] }`;
 * - `scalar`: `[<unix seconds>, "<value>"]` (labels `{}`).
 *
 * Values are strings as Prometheus formats floats: decimal, `NaN`, `+Inf`, `-Inf`.
 */
import { PrometheusError } from "./errors.js";

/** One value of an instant query. */
export interface InstantSample {
  /** The value, finite. */
  value: number;
  /** Evaluation time of the sample, epoch ms. */
  timeMs: number;
  /** The series' labels (`{}` for a scalar or an aggregate without `by`). */
  labels: Record<string, string>;
  /** Prometheus's `warnings` and `infos` (e.g. a PromQL annotation), when it sent any. */
  warnings?: string[];
}

/** The API's envelope, as far as it is read. */
export interface ApiEnvelope {
  status: "success" | "error";
  data?: unknown;
  errorType?: string;
  error?: string;
  warnings: string[];
}

/** `errorType`s that say the query itself failed, whatever the HTTP status. */
const QUERY_ERROR_TYPES = new Set(["bad_data", "execution", "timeout", "canceled"]);

/** Longest service message kept in an error, characters. */
const MAX_MESSAGE = 300;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
}

/** First line of a service message, trimmed, at most {@link MAX_MESSAGE} characters. */
export function shortMessage(message: string): string {
  const line = message.split("\n")[0]?.trim() ?? "";
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 3)}...` : line;
}

/** The envelope in `text`; `undefined` when it is not JSON or has no `status` of the API. */
export function parseEnvelope(text: string): ApiEnvelope | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(body) || (body["status"] !== "success" && body["status"] !== "error")) return undefined;
  return {
    status: body["status"],
    ...("data" in body ? { data: body["data"] } : {}),
    ...(typeof body["errorType"] === "string" ? { errorType: body["errorType"] } : {}),
    ...(typeof body["error"] === "string" ? { error: body["error"] } : {}),
    warnings: [...strings(body["warnings"]), ...strings(body["infos"])],
  };
}

/**
 * The error of an envelope whose status is `error`: `QueryError` for the query error types,
 * otherwise `undefined` (the caller reports the HTTP status).
 */
export function queryErrorOf(
  envelope: ApiEnvelope,
  server: string,
  status: number,
): PrometheusError | undefined {
  const errorType = envelope.errorType;
  if (envelope.status !== "error" || errorType === undefined || !QUERY_ERROR_TYPES.has(errorType)) {
    return undefined;
  }
  const said = envelope.error ? `: ${shortMessage(envelope.error)}` : "";
  return new PrometheusError("QueryError", `query failed (${errorType}${said})`, {
    server,
    status,
    errorType,
  });
}

/** Prometheus's float text → number; `undefined` when it is not one. */
export function parseSampleValue(text: unknown): number | undefined {
  if (typeof text !== "string") return undefined;
  switch (text.toLowerCase()) {
    case "nan":
      return Number.NaN;
    case "+inf":
    case "inf":
      return Number.POSITIVE_INFINITY;
    case "-inf":
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

function valueName(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  return v > 0 ? "+Inf" : "-Inf";
}

function bad(server: string, what: string): PrometheusError {
  return new PrometheusError("BadResponse", `not a Prometheus API answer: ${what}`, { server });
}

/** `{a="x", b="y"}` for a message. */
function labelText(labels: Record<string, string>): string {
  return `{${Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(", ")}}`;
}

/** `[<seconds>, "<value>"]` → the sample; throws BadResponse or NotFinite. */
function point(raw: unknown, labels: Record<string, string>, server: string): InstantSample {
  if (!Array.isArray(raw) || raw.length !== 2 || typeof raw[0] !== "number") {
    throw bad(server, "a sample is not [time, value]");
  }
  const value = parseSampleValue(raw[1]);
  if (value === undefined) throw bad(server, "a sample value is not a number");
  if (!Number.isFinite(value)) {
    throw new PrometheusError(
      "NotFinite",
      `query returned ${valueName(value)}${Object.keys(labels).length > 0 ? ` for ${labelText(labels)}` : ""} (a division by zero or an absent rate?)`,
      { server },
    );
  }
  return { value, timeMs: Math.round(raw[0] * 1000), labels };
}

function labelsOf(raw: unknown, server: string): Record<string, string> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) throw bad(server, "a sample's metric is not an object");
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== "string") throw bad(server, "a label value is not a string");
    labels[k] = v;
  }
  return labels;
}

/**
 * The one sample of a successful envelope.
 * @throws PrometheusError `BadResponse` (not the API's shape), `NoData` (empty vector),
 *   `ManySeries` (more than one sample), `NotFinite` (NaN, ±Inf), `Unsupported` (matrix, string,
 *   native histogram).
 */
export function sampleOf(envelope: ApiEnvelope, server: string): InstantSample {
  const data = envelope.data;
  if (!isRecord(data) || typeof data["resultType"] !== "string") throw bad(server, "no data.resultType");
  const resultType = data["resultType"];
  const result = data["result"];
  let sample: InstantSample;
  switch (resultType) {
    case "scalar":
      sample = point(result, {}, server);
      break;
    case "vector": {
      if (!Array.isArray(result)) throw bad(server, "a vector result is not an array");
      if (result.length === 0) {
        throw new PrometheusError(
          "NoData",
          "query returned no data (an empty vector): no series matches at that time; check the metric name and labels, or append `or vector(0)` if absent means zero",
          { server },
        );
      }
      if (result.length > 1) {
        const first = result[0];
        const shown =
          isRecord(first) && isRecord(first["metric"]) ? labelText(labelsOf(first["metric"], server)) : "?";
        throw new PrometheusError(
          "ManySeries",
          `query returned ${result.length} series, a signal needs one: wrap the query in sum(...) or another aggregation (first: ${shown})`,
          { server, seriesCount: result.length },
        );
      }
      const only: unknown = result[0];
      if (!isRecord(only)) throw bad(server, "a vector sample is not an object");
      const labels = labelsOf(only["metric"], server);
      if (!("value" in only) && "histogram" in only) {
        throw new PrometheusError(
          "Unsupported",
          "query returned a native histogram sample; use histogram_quantile(), histogram_count() or histogram_sum() to get a float",
          { server },
        );
      }
      sample = point(only["value"], labels, server);
      break;
    }
    case "matrix":
      throw new PrometheusError(
        "Unsupported",
        "query returned a range vector (matrix); an instant query for a signal needs an instant vector: apply rate(), avg_over_time() or similar to the range selector",
        { server },
      );
    case "string":
      throw new PrometheusError("Unsupported", "query returned a string, not a number", { server });
    default:
      throw bad(server, `unknown resultType ${JSON.stringify(resultType).slice(0, 40)}`);
  }
  return envelope.warnings.length > 0 ? { ...sample, warnings: envelope.warnings } : sample;
}
