/**
 * The prometheus.yml of a local Prometheus: static scrape targets, one scrape interval. Pure.
 *
 * Targets that share a job and differ only in host:port share one scrape config. Targets of one
 * job that differ in scheme, path, query or CA file cannot (those are per scrape config), so each
 * further kind gets a scrape config named `<job>#2`, `<job>#3`, … whose targets carry the label
 * job=<job>: their series are labelled as the job's all the same (a target group's labels win over
 * the job_name default).
 *
 * Samples keep the timestamps the targets expose (honor_timestamps, Prometheus's default), so a
 * target on a virtual clock writes its series at virtual times; see prometheus.ts for the storage
 * settings that lets through.
 */
import { stringify } from "yaml";

export interface PrometheusTarget {
  /** The `job` label of the target's series. */
  readonly job: string;
  /** The full scrape URL, http or https, e.g. http://127.0.0.1:9400/metrics. */
  readonly url: string;
  /** PEM file of the CA that signs an https target's certificate; default: the system's roots. */
  readonly caFile?: string;
}

export interface PrometheusConfig {
  /** prometheus.yml, as YAML text. */
  readonly yaml: string;
  /** job_name of each scrape config → how many distinct targets it scrapes. */
  readonly pools: ReadonlyMap<string, number>;
}

/** Prometheus's default scrape timeout, ms; it may not exceed the interval. */
const DEFAULT_TIMEOUT_MS = 10_000;

interface Group {
  job: string;
  scheme: "http" | "https";
  path: string;
  params: Record<string, string[]>;
  caFile: string | undefined;
  hosts: string[];
}

function parseTarget(target: PrometheusTarget): Omit<Group, "hosts"> & { host: string } {
  if (target.job === "") throw new Error(`scrape target ${target.url}: empty job`);
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    throw new Error(`scrape target of job ${target.job}: '${target.url}' is not a URL`);
  }
  const scheme = url.protocol.replace(/:$/, "");
  if (scheme !== "http" && scheme !== "https") {
    throw new Error(`scrape target ${target.url}: scheme must be http or https`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new Error(`scrape target of job ${target.job}: credentials in the URL are not supported`);
  }
  if (target.caFile !== undefined && scheme !== "https") {
    throw new Error(`scrape target ${target.url}: caFile is for https targets`);
  }
  const params: Record<string, string[]> = {};
  for (const key of new Set(url.searchParams.keys())) params[key] = url.searchParams.getAll(key);
  return { job: target.job, scheme, path: url.pathname, params, caFile: target.caFile, host: url.host };
}

/** A Prometheus duration for whole milliseconds, e.g. "20ms". */
function duration(ms: number): string {
  return `${ms}ms`;
}

/**
 * prometheus.yml for `targets`, scraped every `scrapeIntervalMs` (a positive whole number of ms)
 * with a timeout of the interval or 10 s, whichever is shorter. Throws on an invalid interval, an
 * empty job, or a URL that is not http(s), carries credentials, or has a caFile without https.
 */
export function prometheusConfig(
  targets: readonly PrometheusTarget[],
  scrapeIntervalMs: number,
): PrometheusConfig {
  if (!Number.isInteger(scrapeIntervalMs) || scrapeIntervalMs < 1) {
    throw new Error(`scrape interval must be a positive whole number of ms, got ${scrapeIntervalMs}`);
  }
  const groups = new Map<string, Group>();
  for (const target of targets) {
    const { host, ...kind } = parseTarget(target);
    const key = JSON.stringify([kind.job, kind.scheme, kind.path, kind.params, kind.caFile ?? null]);
    const group = groups.get(key) ?? { ...kind, hosts: [] };
    groups.set(key, group);
    if (!group.hosts.includes(host)) group.hosts.push(host);
  }

  const perJob = new Map<string, number>();
  const pools = new Map<string, number>();
  const scrapeConfigs = [...groups.values()].map((group) => {
    const n = (perJob.get(group.job) ?? 0) + 1;
    perJob.set(group.job, n);
    const jobName = n === 1 ? group.job : `${group.job}#${n}`;
    pools.set(jobName, group.hosts.length);
    return {
      job_name: jobName,
      scheme: group.scheme,
      metrics_path: group.path,
      ...(Object.keys(group.params).length > 0 ? { params: group.params } : {}),
      ...(group.caFile !== undefined ? { tls_config: { ca_file: group.caFile } } : {}),
      static_configs: [{ targets: group.hosts, ...(n === 1 ? {} : { labels: { job: group.job } }) }],
    };
  });

  const config = {
    global: {
      scrape_interval: duration(scrapeIntervalMs),
      scrape_timeout: duration(Math.min(scrapeIntervalMs, DEFAULT_TIMEOUT_MS)),
    },
    scrape_configs: scrapeConfigs,
  };
  return { yaml: stringify(config), pools };
}
