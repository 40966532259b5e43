import { describe, expect, it } from "vitest";
import { combineAggregates, parseDimensionFilter } from "./monitor.js";

describe("parseDimensionFilter", () => {
  it("reads one dimension's values", () => {
    expect(parseDimensionFilter("Endpoint eq '*'")).toEqual({ dimension: "Endpoint", values: ["*"] });
    expect(parseDimensionFilter("endpoint eq 'client' or Endpoint eq 'server'")).toEqual({
      dimension: "endpoint",
      values: ["client", "server"],
    });
    expect(parseDimensionFilter("Endpoint eq 'a' or Other eq 'b'")).toBeUndefined();
    expect(parseDimensionFilter("Endpoint = client")).toBeUndefined();
  });
});

describe("grains", () => {
  it("combines minutes into coarser grains, skipping missing ones", () => {
    const a = { average: 1, minimum: 0, maximum: 2, total: 10, count: 1 };
    const b = { average: 3, minimum: 1, maximum: 5, total: 20, count: 2 };
    expect(combineAggregates([a, undefined, b])).toEqual({
      average: 2,
      minimum: 0,
      maximum: 5,
      total: 30,
      count: 3,
    });
    expect(combineAggregates([undefined])).toBeUndefined();
  });
});
