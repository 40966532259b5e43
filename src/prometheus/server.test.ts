import { describe, expect, it } from "vitest";
import { describePrometheusServer, resolveServer } from "./server.js";

describe("describePrometheusServer", () => {
  it.each([
    ["https://prom.example:9090/", "https://prom.example:9090"],
    ["http://user:secret@prom.example/prometheus/", "http://prom.example/prometheus"],
    [
      "https://ws-1.westeurope.prometheus.monitor.azure.com",
      "https://ws-1.westeurope.prometheus.monitor.azure.com",
    ],
    ["http://[::1]:9090/a//", "http://[::1]:9090/a"],
    ["not a url user:secret", "(invalid URL)"],
  ])("%s → %s", (url, name) => {
    expect(describePrometheusServer(url)).toBe(name);
  });
});

describe("resolveServer", () => {
  it("appends /api/v1/query to the path prefix and defaults to POST", () => {
    expect(resolveServer({ url: "https://prom.example/prometheus/", timeoutMs: 5000 })).toEqual({
      name: "https://prom.example/prometheus",
      queryUrl: "https://prom.example/prometheus/api/v1/query",
      authorization: undefined,
      caPem: undefined,
      timeoutMs: 5000,
      method: "POST",
    });
  });

  it("prefers the bearer token to URL userinfo, and keeps both out of the URL", () => {
    const withToken = resolveServer({
      url: "https://u:p@prom.example",
      timeoutMs: 1,
      bearerToken: " abc.def \n",
    });
    expect(withToken.authorization).toBe("Bearer abc.def");
    expect(withToken.queryUrl).toBe("https://prom.example/api/v1/query");
    const basic = resolveServer({ url: "https://u%20x:p%3Aw@prom.example", timeoutMs: 1, method: "GET" });
    expect(basic.authorization).toBe(`Basic ${Buffer.from("u x:p:w").toString("base64")}`);
    expect(basic.method).toBe("GET");
  });

  it.each([
    [{ url: "prom.example:9090", timeoutMs: 1 }, TypeError],
    [{ url: "ftp://prom.example", timeoutMs: 1 }, TypeError],
    [{ url: "https://prom.example/?token=x", timeoutMs: 1 }, TypeError],
    [{ url: "https://prom.example/#x", timeoutMs: 1 }, TypeError],
    [{ url: "https://prom.example", timeoutMs: 1, bearerToken: "a\nb" }, TypeError],
    [{ url: "https://prom.example", timeoutMs: 1, bearerToken: "  " }, TypeError],
    [{ url: "https://prom.example", timeoutMs: 0 }, RangeError],
    [{ url: "https://prom.example", timeoutMs: Number.NaN }, RangeError],
  ])("refuses %j", (server, type) => {
    expect(() => resolveServer(server)).toThrow(type);
  });

  it("never puts userinfo or a token into its messages", () => {
    const attempts = [
      { url: "ftp://admin:hunter2@prom.example", timeoutMs: 1 },
      { url: "https://admin:hunter2@prom.example/?q=1", timeoutMs: 1 },
      { url: "https://admin:hunter2@prom.example", timeoutMs: 1, bearerToken: "tok-SECRET\tx" },
      { url: "https://admin:hunter2@prom.example", timeoutMs: -1 },
    ];
    for (const server of attempts) {
      expect(() => resolveServer(server)).toThrow(/prom\.example/);
      try {
        resolveServer(server);
      } catch (err) {
        expect(String(err)).not.toMatch(/admin|hunter2|tok-SECRET/);
      }
    }
  });
});
