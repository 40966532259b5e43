import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { prometheusConfig } from "./prometheus-config.js";

interface ScrapeConfig {
  job_name: string;
  scheme: string;
  metrics_path: string;
  params?: Record<string, string[]>;
  tls_config?: { ca_file: string };
  static_configs: { targets: string[]; labels?: Record<string, string> }[];
}

interface Config {
  global: { scrape_interval: string; scrape_timeout: string };
  scrape_configs: ScrapeConfig[];
}

describe("prometheusConfig", () => {
  it("groups targets of one job and kind, and gives other kinds their own scrape config labelled with the job", () => {
    const { yaml, pools } = prometheusConfig(
      [
        { job: "app", url: "http://127.0.0.1:9001/metrics" },
        { job: "app", url: "http://127.0.0.1:9002/metrics" },
        { job: "app", url: "http://127.0.0.1:9001/metrics" },
        { job: "app", url: "https://localhost:9443/other?shard=2&shard=3&x=y", caFile: "/ca.pem" },
        { job: "hub", url: "http://[::1]:9100/" },
      ],
      20,
    );
    const config = parse(yaml) as Config;
    expect(config.global).toEqual({ scrape_interval: "20ms", scrape_timeout: "20ms" });
    expect(config.scrape_configs).toEqual([
      {
        job_name: "app",
        scheme: "http",
        metrics_path: "/metrics",
        static_configs: [{ targets: ["127.0.0.1:9001", "127.0.0.1:9002"] }],
      },
      {
        job_name: "app#2",
        scheme: "https",
        metrics_path: "/other",
        params: { shard: ["2", "3"], x: ["y"] },
        tls_config: { ca_file: "/ca.pem" },
        static_configs: [{ targets: ["localhost:9443"], labels: { job: "app" } }],
      },
      { job_name: "hub", scheme: "http", metrics_path: "/", static_configs: [{ targets: ["[::1]:9100"] }] },
    ]);
    expect([...pools]).toEqual([
      ["app", 2],
      ["app#2", 1],
      ["hub", 1],
    ]);
  });

  it("keeps the scrape timeout at most the interval and at most Prometheus's default 10 s", () => {
    const timeout = (ms: number) => (parse(prometheusConfig([], ms).yaml) as Config).global.scrape_timeout;
    expect(timeout(1)).toBe("1ms");
    expect(timeout(10_000)).toBe("10000ms");
    expect(timeout(60_000)).toBe("10000ms");
    expect((parse(prometheusConfig([], 60_000).yaml) as Config).global.scrape_interval).toBe("60000ms");
  });

  it("quotes what YAML would misread", () => {
    const { yaml } = prometheusConfig([{ job: "a: b #c", url: "http://127.0.0.1:1/m" }], 1_000);
    expect((parse(yaml) as Config).scrape_configs[0]!.job_name).toBe("a: b #c");
  });

  it.each([
    [[], 0, /positive whole number/],
    [[], 1.5, /positive whole number/],
    [[{ job: "", url: "http://127.0.0.1:1/m" }], 20, /empty job/],
    [[{ job: "a", url: "127.0.0.1:1/m" }], 20, /scheme must be http or https|not a URL/],
    [[{ job: "a", url: "not a url" }], 20, /not a URL/],
    [[{ job: "a", url: "ftp://127.0.0.1/m" }], 20, /scheme must be http or https/],
    [[{ job: "a", url: "http://u:p@127.0.0.1:1/m" }], 20, /credentials/],
    [[{ job: "a", url: "http://127.0.0.1:1/m", caFile: "/ca.pem" }], 20, /caFile is for https/],
  ])("rejects %j every %d ms", (targets, interval, message) => {
    expect(() => prometheusConfig(targets, interval)).toThrow(message);
  });
});
