/**
 * A Prometheus server as a policy names it, and what a call needs of it: the query endpoint, the
 * `Authorization` header, the CA, the deadline, and the redacted name used in errors, logs,
 * metric labels and as the key of the per-server concurrency bound.
 *
 * The base URL may carry a path prefix (`https://example/prometheus`, a Thanos or Mimir
 * frontend, Azure Managed Prometheus's query endpoint); `/api/v1/query` is appended to it.
 * Userinfo in the URL (`https://user:pass@host`) is sent as HTTP Basic authentication, unless a
 * bearer token is given, and never appears in a name or message.
 */

/** Where and how to query one Prometheus-compatible server. */
export interface PrometheusServer {
  /** Base URL, `http:` or `https:`, optionally with a path prefix; no query or fragment. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`; surrounding whitespace (a file's newline) is trimmed. */
  bearerToken?: string;
  /**
   * CA bundle (PEM) that signs the server's certificate; it replaces the system roots for this
   * server, as Prometheus's own `tls_config.ca_file` does. Omitted: the system roots.
   */
  caPem?: string;
  /**
   * Deadline of one call, ms (queue time behind the concurrency bound included); > 0, rounded up
   * to a whole ms (what `AbortSignal.timeout` takes).
   */
  timeoutMs: number;
  /** HTTP method of `/api/v1/query` (default `POST`: a form body, so long PromQL fits). */
  method?: "GET" | "POST";
}

/** A {@link PrometheusServer}, checked and ready to call. */
export interface ResolvedServer {
  /** Origin and path prefix, without userinfo or trailing slash: what errors and metrics show. */
  name: string;
  /** The `/api/v1/query` URL, without userinfo. */
  queryUrl: string;
  /** The `Authorization` header value, when the server needs one. */
  authorization: string | undefined;
  caPem: string | undefined;
  timeoutMs: number;
  method: "GET" | "POST";
}

const TOKEN = /^[\x21-\x7e]+$/;

/**
 * The redacted name of a base URL: `scheme://host[:port]/path`, without userinfo, query, fragment
 * or trailing slash; `(invalid URL)` when it does not parse. Safe to log.
 */
export function describePrometheusServer(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return "(invalid URL)";
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}

/**
 * Checks `server` and derives what a call needs.
 * @throws TypeError when the URL does not parse, is not `http:`/`https:`, or has a query or
 *   fragment, or when the bearer token is empty or has characters a header cannot carry;
 *   RangeError when `timeoutMs` is not a positive finite number. No message contains the URL's
 *   userinfo or the token.
 */
export function resolveServer(server: PrometheusServer): ResolvedServer {
  const url = URL.parse(server.url);
  if (!url) throw new TypeError("Prometheus server URL does not parse");
  const name = describePrometheusServer(server.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`Prometheus server ${name}: the URL must be http: or https:`);
  }
  if (url.search !== "" || url.hash !== "") {
    throw new TypeError(`Prometheus server ${name}: the URL must not have a query or fragment`);
  }
  if (!(Number.isFinite(server.timeoutMs) && server.timeoutMs > 0)) {
    throw new RangeError(`Prometheus server ${name}: timeoutMs must be a positive number of ms`);
  }
  let authorization: string | undefined;
  if (server.bearerToken !== undefined) {
    const token = server.bearerToken.trim();
    if (!TOKEN.test(token)) {
      throw new TypeError(`Prometheus server ${name}: the bearer token is empty or not printable ASCII`);
    }
    authorization = `Bearer ${token}`;
  } else if (url.username !== "" || url.password !== "") {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  }
  return {
    name,
    queryUrl: `${name}/api/v1/query`,
    authorization,
    caPem: server.caPem,
    timeoutMs: Math.ceil(server.timeoutMs),
    method: server.method ?? "POST",
  };
}
