/**
 * Who a Microsoft Entra access token speaks for: the identifying claims of its payload, so that a
 * check can say whose permissions it tested and which role assignments to look at. Pure. The
 * token is decoded, not verified (Azure verifies it), and never kept or printed.
 *
 * Claims (Microsoft identity platform, "Access token claims reference",
 * https://learn.microsoft.com/entra/identity-platform/access-token-claims-reference): `oid` the
 * principal's object ID (what role assignments name), `appid` (v1.0 tokens) or `azp` (v2.0) the
 * client application, `tid` the tenant, `idtyp` `app` for an application (a managed identity or a
 * service principal) and `user` for a person, whose sign-in name is `upn`, `unique_name` or
 * `preferred_username`.
 */

/** The principal a token was issued to. */
export interface Principal {
  /** `oid`: the object ID role assignments name. */
  objectId?: string;
  /** `appid` or `azp`: the client (application) ID. */
  appId?: string;
  /** `tid`. */
  tenantId?: string;
  /** `app` or `user`, from `idtyp` (or a sign-in name being present). */
  type?: "app" | "user";
  /** A person's sign-in name. */
  userName?: string;
}

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * The principal of a JWT access token (`header.payload.signature`, base64url), or `undefined` for
 * a token that is not one (an emulator's fixed token) or carries none of the claims.
 */
export function principalOfToken(token: string): Principal | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts[1]) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof claims !== "object" || claims === null) return undefined;
  const c = claims as Record<string, unknown>;
  const userName = text(c["upn"]) ?? text(c["unique_name"]) ?? text(c["preferred_username"]);
  const idtyp = text(c["idtyp"]);
  const out: Principal = {};
  const set = <K extends keyof Principal>(key: K, value: Principal[K] | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set("objectId", text(c["oid"]));
  set("appId", text(c["appid"]) ?? text(c["azp"]));
  set("tenantId", text(c["tid"]));
  set("type", idtyp === "app" || idtyp === "user" ? idtyp : userName ? "user" : undefined);
  set("userName", userName);
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `app 1b2c… (object 3d4e…, tenant 5f6a…)` or `user ana@contoso.com (object …, tenant …)`. */
export function describePrincipal(p: Principal): string {
  const who = p.type === "user" ? `user ${p.userName ?? p.objectId ?? "?"}` : `app ${p.appId ?? "?"}`;
  const ids = [
    p.objectId !== undefined ? `object ${p.objectId}` : undefined,
    p.tenantId !== undefined ? `tenant ${p.tenantId}` : undefined,
  ].filter((x) => x !== undefined);
  return ids.length > 0 ? `${who} (${ids.join(", ")})` : who;
}
