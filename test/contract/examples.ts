/**
 * The official examples (`x-ms-examples`) vendored with the specs, found through the specs
 * themselves: each example a spec operation references and whose file is vendored, with the
 * operation's method, path template and host, and the example's request turned into a URL and body
 * and its responses into answers (status, headers, body) — what a service speaking the contract
 * would exchange.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { TrafficExchange } from "../../src/emulator/index.js";
import { SPEC_FILES, SPECS_DIR } from "./contract.js";

type Json = Record<string, unknown>;

/** One response of an example. */
export interface ExampleResponse {
  /** HTTP status; an example's `default` answer is served as 400 (its error code is BadRequest). */
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** One vendored official example of a spec operation. */
export interface OfficialExample {
  /** Path of the example file, relative to the vendored specs' root. */
  file: string;
  /** Key of the spec in {@link SPEC_FILES}. */
  spec: keyof typeof SPEC_FILES;
  operationId: string;
  /** `GET`, `PATCH`, `POST`, … */
  method: string;
  /** The request URL the example's parameters make (`https://management.azure.com/…?api-version=…`). */
  url: string;
  /** The request body parameter's value, when the operation has one. */
  requestBody: unknown;
  responses: ExampleResponse[];
}

function readJson(path: string): Json {
  return JSON.parse(readFileSync(path, "utf8")) as Json;
}

/** Follows a `$ref` to a parameter (same file or another file, JSON pointer after `#`). */
function resolveParameter(specPath: string, spec: Json, p: Json): Json {
  const ref = p["$ref"];
  if (typeof ref !== "string") return p;
  const [file, pointer = ""] = ref.split("#");
  const doc = file ? readJson(join(dirname(specPath), file)) : spec;
  let node: unknown = doc;
  for (const part of pointer.split("/").filter((s) => s !== "")) node = (node as Json)[part];
  return node as Json;
}

function statusOf(key: string): number {
  return key === "default" ? 400 : Number(key);
}

function hostOf(spec: Json, parameters: Json): string {
  const parameterized = spec["x-ms-parameterized-host"] as Json | undefined;
  if (parameterized) {
    const base = parameters["baseUrl"] ?? parameters["endpoint"];
    if (typeof base !== "string") throw new Error("an example of a parameterized host needs baseUrl");
    return base.replace(/\/+$/, "");
  }
  return `https://${String(spec["host"] ?? "management.azure.com")}`;
}

/** Every vendored example that a spec of {@link SPEC_FILES} references, in spec order. */
export function officialExamples(): OfficialExample[] {
  const out: OfficialExample[] = [];
  for (const [key, specFile] of Object.entries(SPEC_FILES) as [keyof typeof SPEC_FILES, string][]) {
    const specPath = join(SPECS_DIR, specFile);
    if (!existsSync(specPath)) continue;
    const spec = readJson(specPath);
    for (const [template, item] of Object.entries(spec["paths"] as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item) as [string, Json][]) {
        const examples = (op["x-ms-examples"] ?? {}) as Record<string, { $ref: string }>;
        for (const { $ref } of Object.values(examples)) {
          const examplePath = join(dirname(specPath), $ref);
          if (!existsSync(examplePath)) continue;
          const example = readJson(examplePath);
          const parameters = example["parameters"] as Json;
          const params = ((op["parameters"] ?? []) as Json[]).map((p) => resolveParameter(specPath, spec, p));
          const path = template.replace(/\{([^}]+)\}/g, (_, name: string) =>
            encodeURIComponent(String(parameters[name])),
          );
          const query = new URLSearchParams();
          for (const p of params) {
            if (p["in"] === "query" && parameters[p["name"] as string] !== undefined) {
              query.set(p["name"] as string, String(parameters[p["name"] as string]));
            }
          }
          const bodyParam = params.find((p) => p["in"] === "body");
          const responses = Object.entries(example["responses"] as Record<string, Json>).map(
            ([status, r]): ExampleResponse => ({
              status: statusOf(status),
              headers: Object.fromEntries(
                Object.entries((r["headers"] ?? {}) as Record<string, unknown>).map(([k, v]) => [
                  k.toLowerCase(),
                  String(v),
                ]),
              ),
              body: r["body"],
            }),
          );
          out.push({
            file: relative(SPECS_DIR, examplePath),
            spec: key,
            operationId: op["operationId"] as string,
            method: method.toUpperCase(),
            url: `${hostOf(spec, parameters)}${path}?${query.toString()}`,
            requestBody: bodyParam ? parameters[bodyParam["name"] as string] : undefined,
            responses,
          });
        }
      }
    }
  }
  return out;
}

/** The exchanges an example describes: its request with each of its responses. */
export function exampleExchanges(example: OfficialExample): TrafficExchange[] {
  return example.responses.map((r) => ({
    request: {
      method: example.method,
      url: example.url,
      headers: example.requestBody !== undefined ? { "content-type": "application/json" } : {},
      body: example.requestBody,
    },
    response: {
      status: r.status,
      headers: { ...(r.body !== undefined ? { "content-type": "application/json" } : {}), ...r.headers },
      body: r.body,
    },
  }));
}
