/**
 * The one redaction of free text before it leaves the process: log lines, status conditions,
 * Events, `/readyz`, `/healthz`, `/metrics` and CLI errors all go through {@link scrubSecrets}.
 * Error messages from SDKs and servers can echo request headers, URLs, token responses and
 * connection strings; this removes the credentials and keeps the rest readable. Pure.
 *
 * Spellings removed (case-insensitive):
 * - an `Authorization` header's credential, whatever its scheme (`Authorization: Bearer …`,
 *   `authorization=Basic …`; the scheme stays), and a `Bearer …` / `bearer …` credential anywhere;
 * - a JWT (`eyJ…` header and payload, with or without the signature);
 * - `name=value` pairs whose name says credential: `access_token=`, `refresh_token=`,
 *   `client_secret=`, `password=`, `sig=` (SAS), `AccessKey=` / `AccountKey=` /
 *   `SharedAccessKey=` (connection strings), `api_key=`, … — up to `&`, `;`, `,`, a quote or a blank;
 * - the same names as JSON members, `"accessToken":"…"`, also inside JSON-escaped strings;
 * - the password of a URL's userinfo (`https://user:password@host`).
 *
 * The replacement, `[redacted]`, holds no quote, backslash or blank, so JSON log lines and the
 * Prometheus text format stay valid. Label syntax (`name="value"`) is not a `name=value` pair:
 * a value starting with a quote is left to the JSON rule.
 */

/** What a credential is replaced with. */
export const REDACTED = "[redacted]";

/** Names of `name=value` pairs and JSON members that hold credentials. */
const SECRET_NAME =
  "(?:[a-z_-]*(?:token|secret|password|passwd|pwd|credential)|[a-z_-]*(?:access|account|shared|api|primary|secondary|client|subscription)[_-]?key|sig|signature|client_assertion)";

const RULES: readonly [RegExp, string][] = [
  // Authorization header values, any scheme: the credential after the scheme (the scheme stays).
  [
    /(\bauthorization\\*"?\s*[:=]\s*\\*"?)(?!(?:[A-Za-z-]+[ \t]+)?\[redacted\])((?:[A-Za-z-]+[ \t]+)?)[^\s"\\;,]+/gi,
    `$1$2${REDACTED}`,
  ],
  // A bearer credential anywhere.
  [/(\bbearer\s+)(?!\[redacted\])[A-Za-z0-9\-._~+/]+=*/gi, `$1${REDACTED}`],
  // JSON members, plain or JSON-escaped (once or more): "accessToken":"…", \"client_secret\":\"…\".
  [new RegExp(`((\\\\*")${SECRET_NAME}\\2\\s*:\\s*\\2)(?!\\[redacted\\])[^"\\\\]*`, "gi"), `$1${REDACTED}`],
  // name=value pairs (query strings, form bodies, connection strings, SAS).
  [new RegExp(`(\\b${SECRET_NAME}=)(?!\\[redacted\\])[^&;,\\s"'\\\\]+`, "gi"), `$1${REDACTED}`],
  // URL userinfo password.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@"'\\]+:)(?!\[redacted\])[^/\s@"'\\]+@/gi, `$1${REDACTED}@`],
  // JWTs: header and payload (base64url of `{"…`), with or without the signature.
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?/g, REDACTED],
];

/** `text` with every credential spelling above replaced by `[redacted]`. Idempotent. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}
