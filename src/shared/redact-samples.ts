/**
 * The table of credential spellings every output surface is tested with (logs, status, Events,
 * `/readyz`, `/healthz`, `/metrics`, CLI errors): each sample is a line as an SDK or a server
 * might write it, the credential in it that must never come out, and a part that must stay.
 * Every credential here is made up.
 */

/** A JWT of the shape Entra ID issues (header, payload, signature; all invented). */
export const SAMPLE_JWT =
  "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQuYXp1cmUuY29tIn0.c2lnbmF0dXJlLW9mLWFuLWludmVudGVkLXRva2Vu";

export interface SecretSample {
  /** What the sample is. */
  name: string;
  /** The text, as it would appear in an error message. */
  text: string;
  /** The credential: must not appear after redaction. */
  secret: string;
  /** Context that must survive redaction. */
  kept: string;
}

export const SECRET_SAMPLES: readonly SecretSample[] = [
  {
    name: "Authorization: Bearer <JWT>",
    text: `request failed; Authorization: Bearer ${SAMPLE_JWT}`,
    secret: SAMPLE_JWT,
    kept: "request failed",
  },
  {
    name: "lower-case bearer",
    text: "retrying with authorization: bearer 0pAqUe-T0k3n.value~x (401)",
    secret: "0pAqUe-T0k3n.value~x",
    kept: "(401)",
  },
  {
    name: "a bare Bearer credential",
    text: "header was bearer Zm9vYmFyYmF6cXV4c2VjcmV0 when it failed",
    secret: "Zm9vYmFyYmF6cXV4c2VjcmV0",
    kept: "when it failed",
  },
  {
    name: "a bare JWT",
    text: `token ${SAMPLE_JWT} is expired`,
    secret: SAMPLE_JWT,
    kept: "is expired",
  },
  {
    name: "access_token=…",
    text: "callback https://login.example.com/cb?access_token=ya29.SeCrEtAcCeSs&state=42",
    secret: "ya29.SeCrEtAcCeSs",
    kept: "state=42",
  },
  {
    name: '"accessToken":"…"',
    text: 'token response {"accessToken":"SeCrEtJsOnToKeN123","expiresOn":"2030-01-01T00:00:00Z"}',
    secret: "SeCrEtJsOnToKeN123",
    kept: '"expiresOn":"2030-01-01T00:00:00Z"',
  },
  {
    name: "client_secret=…",
    text: "POST body grant_type=client_credentials&client_secret=S3cr3t~Cl1ent.V4lue&scope=arm",
    secret: "S3cr3t~Cl1ent.V4lue",
    kept: "scope=arm",
  },
  {
    name: "SAS sig=…",
    text: "GET https://acct.blob.core.windows.net/c/b?sv=2022-11-02&se=2030-01-01&sig=AbCdEf%2BgHiJkLmN%3D failed",
    secret: "AbCdEf%2BgHiJkLmN%3D",
    kept: "sv=2022-11-02",
  },
  {
    name: "AccessKey=… in a connection string",
    text: "Endpoint=https://chat.service.signalr.net;AccessKey=QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=;Version=1.0;",
    secret: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
    kept: "Endpoint=https://chat.service.signalr.net",
  },
  {
    name: "a password in URL userinfo",
    text: "cannot reach https://scraper:Pa55w0rd-x1@prometheus.example.com:9090/api/v1/query",
    secret: "Pa55w0rd-x1",
    kept: "prometheus.example.com:9090/api/v1/query",
  },
];
