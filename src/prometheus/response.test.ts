import { describe, expect, it } from "vitest";
import { PrometheusError } from "./errors.js";
import { parseEnvelope, parseSampleValue, sampleOf } from "./response.js";

const S = "https://prom.example";

function kindOf(body: unknown): string {
  const envelope = parseEnvelope(JSON.stringify(body));
  if (!envelope) return "no envelope";
  try {
    sampleOf(envelope, S);
    return "ok";
  } catch (err) {
    if (err instanceof PrometheusError) return err.kind;
    throw err;
  }
}

const ok = (data: unknown) => ({ status: "success", data });

describe("parseSampleValue", () => {
  it.each([
    ["42", 42],
    ["-0.5", -0.5],
    ["1e+21", 1e21],
    [".5", 0.5],
    ["NaN", Number.NaN],
    ["+Inf", Number.POSITIVE_INFINITY],
    ["-Inf", Number.NEGATIVE_INFINITY],
    ["", undefined],
    ["12abc", undefined],
    ["0x10", undefined],
    [12, undefined],
  ])("%j → %s", (text, value) => {
    expect(parseSampleValue(text)).toBe(value);
  });
});

describe("sampleOf", () => {
  it("reads a vector sample and a scalar", () => {
    const vector = parseEnvelope(
      JSON.stringify(
        ok({ resultType: "vector", result: [{ metric: { job: "a" }, value: [1700000000.5, "3"] }] }),
      ),
    );
    expect(vector && sampleOf(vector, S)).toEqual({
      value: 3,
      timeMs: 1_700_000_000_500,
      labels: { job: "a" },
    });
    const scalar = parseEnvelope(JSON.stringify(ok({ resultType: "scalar", result: [1700000000, "-2"] })));
    expect(scalar && sampleOf(scalar, S)).toEqual({ value: -2, timeMs: 1_700_000_000_000, labels: {} });
  });

  it.each([
    ["a sample without metric", ok({ resultType: "vector", result: [{ value: [1, "1"] }] }), "ok"],
    ["empty vector", ok({ resultType: "vector", result: [] }), "NoData"],
    [
      "two samples",
      ok({ resultType: "vector", result: [{ value: [1, "1"] }, { value: [1, "2"] }] }),
      "ManySeries",
    ],
    ["NaN", ok({ resultType: "scalar", result: [1, "NaN"] }), "NotFinite"],
    ["matrix", ok({ resultType: "matrix", result: [] }), "Unsupported"],
    ["string", ok({ resultType: "string", result: [1, "x"] }), "Unsupported"],
    [
      "native histogram",
      ok({ resultType: "vector", result: [{ metric: {}, histogram: [1, { count: "2", sum: "3" }] }] }),
      "Unsupported",
    ],
    ["no data", { status: "success" }, "BadResponse"],
    ["unknown resultType", ok({ resultType: "table", result: [] }), "BadResponse"],
    ["value not a string", ok({ resultType: "scalar", result: [1, 2] }), "BadResponse"],
    ["time not a number", ok({ resultType: "scalar", result: ["1", "2"] }), "BadResponse"],
    [
      "label not a string",
      ok({ resultType: "vector", result: [{ metric: { a: 1 }, value: [1, "1"] }] }),
      "BadResponse",
    ],
    ["vector not an array", ok({ resultType: "vector", result: {} }), "BadResponse"],
  ])("%s → %s", (_name, body, kind) => {
    expect(kindOf(body)).toBe(kind);
  });

  it("says how many series, how to make one, and shows the first in a ManySeries message", () => {
    const result = Array.from({ length: 5 }, (_, i) => ({ metric: { pod: `p${i}` }, value: [1, "1"] }));
    const envelope = parseEnvelope(JSON.stringify(ok({ resultType: "vector", result })));
    expect(() => envelope && sampleOf(envelope, S)).toThrow(
      /query returned 5 series, a signal needs one: wrap the query in sum\(\.\.\.\) .*\(first: \{pod="p0"\}\)$/,
    );
  });

  it("keeps warnings and infos", () => {
    const envelope = parseEnvelope(
      JSON.stringify({ ...ok({ resultType: "scalar", result: [1, "1"] }), warnings: ["w"], infos: ["i"] }),
    );
    expect(envelope && sampleOf(envelope, S).warnings).toEqual(["w", "i"]);
  });
});

describe("parseEnvelope", () => {
  it("is undefined for what is not the API's", () => {
    expect(parseEnvelope("<html>")).toBeUndefined();
    expect(parseEnvelope("[1]")).toBeUndefined();
    expect(parseEnvelope('{"status":"ok"}')).toBeUndefined();
    expect(parseEnvelope('{"status":"error","errorType":"bad_data","error":"x"}')).toEqual({
      status: "error",
      errorType: "bad_data",
      error: "x",
      warnings: [],
    });
  });
});
