/**
 * Contract checks against Azure's published REST API specs, vendored under `azure-rest-api-specs/`
 * (see its README for the repository, the commit of each file and what was taken).
 *
 * Validation is Azure's own `oav` `LiveValidator` (the live/traffic validator of the
 * azure-rest-api-specs CI), offline against the vendored files, in ARM mode (long-running
 * operations must answer 201/202 with `Location` or `Azure-AsyncOperation`). For each exchange:
 * the request's path + method + api-version must resolve to an operation of the specs, its path,
 * query and body parameters must match; the response's status must be one the operation lists (or
 * `default`, whose schema is the ErrorResponse) and its headers and body must match the schema.
 *
 * The ARM async-operation URLs (`…/locations/{l}/operationStatuses/{id}`, `…/operationResults/{id}`)
 * belong to ARM's async protocol, not to an RP spec: a status body is validated with `ajv` against
 * the vendored common-types v5 `OperationStatusResult`, an error against v5 `ErrorResponse`, and a
 * final result (200) as the answer of a GET of the resource it names.
 *
 * The emulator serves ARM at its root and the metrics data plane of region `r` under `/metrics/r`;
 * {@link azureUrl} maps its URLs to the Azure hosts the specs describe.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { type LiveValidationIssue, type LiveValidationResult, LiveValidator } from "oav";
import type { TrafficExchange } from "../../src/emulator/index.js";

/** The vendored specs' root (the repository's root layout below it). */
export const SPECS_DIR = fileURLToPath(new URL("./azure-rest-api-specs/", import.meta.url));

/** The spec files validated against, relative to {@link SPECS_DIR}. */
export const SPEC_FILES = {
  signalR: "specification/signalr/resource-manager/Microsoft.SignalRService/stable/2024-03-01/signalr.json",
  webPubSub:
    "specification/webpubsub/resource-manager/Microsoft.SignalRService/stable/2024-03-01/webpubsub.json",
  metricBatch: "specification/monitor/data-plane/Microsoft.Insights/stable/2024-02-01/metricBatch.json",
  autoscale: "specification/monitor/resource-manager/Microsoft.Insights/stable/2015-04-01/autoscale_API.json",
} as const;

const COMMON_TYPES_V5 = "specification/common-types/resource-management/v5/types.json";

/** oav's live validator over `specs` (paths relative to {@link SPECS_DIR}). */
function liveValidator(specs: readonly string[]): LiveValidator {
  return new LiveValidator(
    {
      directory: SPECS_DIR,
      swaggerPathsPattern: [...specs],
      excludedSwaggerPathsPattern: [],
      git: { shouldClone: false },
      isPathCaseSensitive: false,
      isArmCall: true,
    },
    () => {
      // oav's own log: what it finds is returned and reported as violations instead.
    },
  );
}

/** One place where an exchange departs from the published contract. */
export interface ContractViolation {
  /** The spec operation (`SignalR_Get@2024-03-01`), or what was asked when none matched. */
  operation: string;
  direction: "request" | "response";
  /** `GET https://management.azure.com/…` as Azure would have received it. */
  call: string;
  /** Response status (0 for a request). */
  status: number;
  /** oav's issue code (`INVALID_TYPE`, `OPERATION_NOT_FOUND_IN_CACHE_WITH_API`, …). */
  code: string;
  /** JSON path in the payload (`$.properties.publicPort`), `""` when the whole call. */
  path: string;
  /** The schema rule broken, with its place in the spec (`signalr.json#/definitions/…`). */
  rule: string;
  message: string;
}

/** What validating one exchange found. */
export interface ExchangeResult {
  operation: string;
  violations: ContractViolation[];
}

/**
 * The URL Azure would have received for an emulator URL (loopback): ARM, or a region's metrics
 * endpoint. Other URLs are Azure's already and stay as they are.
 */
export function azureUrl(emulatorUrl: string): string {
  const u = new URL(emulatorUrl);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(u.hostname)) return emulatorUrl;
  const metrics = /^\/metrics\/([^/]+)(\/.*)$/.exec(u.pathname);
  if (metrics) return `https://${metrics[1]}.metrics.monitor.azure.com${metrics[2]}${u.search}`;
  return `https://management.azure.com${u.pathname}${u.search}`;
}

const ASYNC_OPERATION =
  /^\/subscriptions\/[^/]+\/providers\/Microsoft\.SignalRService\/locations\/[^/]+\/(operationStatuses|operationResults)\/[^/]+$/i;

function issueRule(issue: LiveValidationIssue): string {
  const file = issue.source?.url?.split("/").at(-1) ?? "";
  const ref = issue.source?.jsonRef ?? "";
  const schemaPath = (issue as { schemaPath?: string }).schemaPath;
  return [file && ref ? `${file}${ref}` : file || ref, schemaPath].filter(Boolean).join(" ");
}

function ajvRule(e: ErrorObject): string {
  return `types.json#/definitions/… ${e.schemaPath}`;
}

/** Validates exchanges against the vendored specs. Build with {@link ContractValidator.load}. */
export class ContractValidator {
  readonly #live: LiveValidator;
  /** SignalR's spec alone: for provider-level paths both specs serve alike (`Usages_List`). */
  readonly #signalROnly: LiveValidator;
  readonly #operationStatus: ValidateFunction;
  readonly #errorResponse: ValidateFunction;
  /** `operationId@api-version` of every long-running operation of the specs. */
  readonly #longRunning: ReadonlySet<string>;

  private constructor(
    live: LiveValidator,
    signalROnly: LiveValidator,
    ajv: Ajv,
    longRunning: ReadonlySet<string>,
  ) {
    this.#live = live;
    this.#signalROnly = signalROnly;
    this.#longRunning = longRunning;
    this.#operationStatus = ajv.compile({ $ref: "types.json#/definitions/OperationStatusResult" });
    this.#errorResponse = ajv.compile({ $ref: "types.json#/definitions/ErrorResponse" });
  }

  /** Loads every spec of {@link SPEC_FILES} (about a second). */
  static async load(): Promise<ContractValidator> {
    const live = liveValidator(Object.values(SPEC_FILES));
    const signalROnly = liveValidator([SPEC_FILES.signalR]);
    await Promise.all([live.initialize(), signalROnly.initialize()]);
    const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    ajv.addFormat("arm-id", true);
    ajv.addFormat("double", true);
    ajv.addSchema(JSON.parse(readFileSync(`${SPECS_DIR}${COMMON_TYPES_V5}`, "utf8")), "types.json");
    return new ContractValidator(live, signalROnly, ajv, longRunningOperations());
  }

  /** The spec files the validator found (absolute paths). */
  get specs(): readonly string[] {
    return this.#live.swaggerList;
  }

  /** Validates one recorded exchange (request and response). */
  async validate(exchange: TrafficExchange): Promise<ExchangeResult> {
    const url = azureUrl(exchange.request.url);
    const method = exchange.request.method.toUpperCase();
    const call = `${method} ${url}`;
    const asyncOp = ASYNC_OPERATION.exec(new URL(url).pathname);
    if (asyncOp) return this.#validateAsyncOperation(exchange, url, call, asyncOp[1] as string);
    const live = {
      liveRequest: {
        url,
        method,
        headers: exchange.request.headers,
        ...(exchange.request.body !== undefined
          ? { body: exchange.request.body as Record<string, unknown> }
          : {}),
      },
      liveResponse: {
        statusCode: String(exchange.response.status),
        headers: exchange.response.headers,
        ...(exchange.response.body !== undefined
          ? { body: exchange.response.body as Record<string, unknown> }
          : {}),
      },
    };
    let result = await this.#live.validateLiveRequestResponse(live);
    // The SignalR and Web PubSub specs both describe the provider's own paths (the usages of a
    // region), with the same operation and schemas: those are validated against SignalR's.
    if (result.requestValidationResult.runtimeException?.code === "MULTIPLE_OPERATIONS_FOUND")
      result = await this.#signalROnly.validateLiveRequestResponse(live);
    const operation = operationName(result.requestValidationResult, method, url);
    const violations = [
      ...this.#issues(result.requestValidationResult, "request", operation, call, 0),
      ...this.#issues(result.responseValidationResult, "response", operation, call, exchange.response.status),
    ];
    // oav checks a long-running operation's polling headers only on answers with a schema; a 202
    // without a body (SignalR_Update, WebPubSub_Update) needs them as much.
    const { status, headers } = exchange.response;
    if (
      (status === 201 || status === 202) &&
      this.#longRunning.has(operation) &&
      !headers["location"] &&
      !headers["azure-asyncoperation"]
    ) {
      violations.push({
        operation,
        direction: "response",
        call,
        status,
        code: "LRO_RESPONSE_HEADER",
        path: "headers",
        rule: "x-ms-long-running-operation: a 201/202 answer carries Location or Azure-AsyncOperation",
        message: "neither Location nor Azure-AsyncOperation is set",
      });
    }
    return { operation, violations };
  }

  /** Validates many exchanges; every violation, in order. */
  async validateAll(exchanges: readonly TrafficExchange[]): Promise<ContractViolation[]> {
    const out: ContractViolation[] = [];
    for (const e of exchanges) out.push(...(await this.validate(e)).violations);
    return out;
  }

  #issues(
    result: LiveValidationResult,
    direction: "request" | "response",
    operation: string,
    call: string,
    status: number,
  ): ContractViolation[] {
    const out: ContractViolation[] = [];
    // A request that matches no operation is one violation, reported once (on the request).
    if (result.runtimeException && direction === "request") {
      out.push({
        operation,
        direction,
        call,
        status,
        code: result.runtimeException.code,
        path: "",
        rule: "the request must match an operation of the vendored specs (path, method, api-version)",
        message: result.runtimeException.message,
      });
    }
    for (const issue of result.errors) {
      out.push({
        operation,
        direction,
        call,
        status,
        code: issue.code,
        path: issue.jsonPathsInPayload?.[0] ?? issue.pathsInPayload?.[0] ?? "",
        rule: issueRule(issue),
        message: issue.message,
      });
    }
    return out;
  }

  async #validateAsyncOperation(
    exchange: TrafficExchange,
    url: string,
    call: string,
    kind: string,
  ): Promise<ExchangeResult> {
    const operation = `ARM async operation (${kind})`;
    const violations: ContractViolation[] = [];
    const push = (
      direction: "request" | "response",
      code: string,
      path: string,
      rule: string,
      message: string,
    ) =>
      violations.push({
        operation,
        direction,
        call,
        status: direction === "request" ? 0 : exchange.response.status,
        code,
        path,
        rule,
        message,
      });
    const apiVersion = new URL(url).searchParams.get("api-version");
    if (!apiVersion) {
      push(
        "request",
        "MISSING_REQUIRED_PARAMETER",
        "api-version",
        "types.json#/parameters/ApiVersionParameter",
        "api-version is required",
      );
    }
    if (exchange.request.method.toUpperCase() !== "GET") {
      push(
        "request",
        "OPERATION_NOT_FOUND",
        "",
        "ARM async operations are read with GET",
        `method ${exchange.request.method}`,
      );
    }
    const { status, body } = exchange.response;
    const ajvErrors = (validate: ValidateFunction, value: unknown) => {
      if (validate(value)) return;
      for (const e of validate.errors ?? []) {
        push(
          "response",
          `AJV_${e.keyword.toUpperCase()}`,
          `$${e.instancePath.replaceAll("/", ".")}`,
          ajvRule(e),
          e.message ?? "",
        );
      }
    };
    if (status >= 400) {
      ajvErrors(this.#errorResponse, body);
    } else if (kind.toLowerCase() === "operationstatuses") {
      if (status !== 200)
        push("response", "INVALID_RESPONSE_CODE", "", "operationStatuses answers 200", `status ${status}`);
      else ajvErrors(this.#operationStatus, body);
    } else if (status === 202) {
      if (!exchange.response.headers["location"]) {
        push(
          "response",
          "LRO_RESPONSE_HEADER",
          "location",
          "a running operation's result answers 202 with Location",
          "no Location header",
        );
      }
    } else if (status === 200) {
      // The final result is the resource as its GET returns it.
      const id = (body as { id?: unknown } | undefined)?.id;
      if (typeof id !== "string") {
        push("response", "REQUIRED_PROPERTY_MISSING", "$.id", "the final result is the resource", "no id");
      } else {
        const get = await this.validate({
          request: {
            method: "GET",
            url: `https://management.azure.com${id}?api-version=${apiVersion ?? ""}`,
            headers: {},
            body: undefined,
          },
          response: exchange.response,
        });
        for (const v of get.violations)
          violations.push({ ...v, operation: `${operation} as ${v.operation}`, call });
      }
    } else if (status !== 204) {
      push(
        "response",
        "INVALID_RESPONSE_CODE",
        "",
        "operationResults answers 200, 202 or 204",
        `status ${status}`,
      );
    }
    return { operation, violations };
  }
}

/** Every `x-ms-long-running-operation` of {@link SPEC_FILES}, as `operationId@api-version`. */
function longRunningOperations(): Set<string> {
  const out = new Set<string>();
  for (const file of Object.values(SPEC_FILES)) {
    const spec = JSON.parse(readFileSync(`${SPECS_DIR}${file}`, "utf8")) as {
      info: { version: string };
      paths: Record<
        string,
        Record<string, { operationId?: string; "x-ms-long-running-operation"?: boolean }>
      >;
    };
    for (const item of Object.values(spec.paths)) {
      for (const op of Object.values(item)) {
        if (op["x-ms-long-running-operation"] === true && op.operationId) {
          out.add(`${op.operationId}@${spec.info.version}`);
        }
      }
    }
  }
  return out;
}

function operationName(result: LiveValidationResult, method: string, url: string): string {
  const info = result.operationInfo;
  if (info && info.operationId !== "unknownOperationId") return `${info.operationId}@${info.apiVersion}`;
  const u = new URL(url);
  return `${method} ${u.pathname}?api-version=${u.searchParams.get("api-version") ?? ""}`;
}

/** One line per violation: operation, direction, JSON path, code, message, rule. */
export function formatViolations(violations: readonly ContractViolation[]): string {
  return violations
    .map(
      (v) =>
        `${v.operation} ${v.direction}${v.status ? ` ${v.status}` : ""} ${v.path || "(call)"}: ${v.code}: ${v.message} [${v.rule}] — ${v.call}`,
    )
    .join("\n");
}

/** Violations counted by `operation direction code path`, for a report. */
export function countViolations(violations: readonly ContractViolation[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of violations) {
    const key = `${v.operation} ${v.direction} ${v.code} ${v.path || "(call)"}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Map([...counts].sort((a, b) => a[0].localeCompare(b[0])));
}
