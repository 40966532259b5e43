import { describe, expect, it } from "vitest";
import { DEFAULT_RATE_RANGE_SECONDS, rateWindowSeconds } from "./leading-window.js";

describe("the rate window of a leading-signal query", () => {
  it.each([
    ['sum(rate(http_server_request_duration_seconds_count{http_route="/chat/negotiate"}[1m]))', 60],
    ["sum(rate(negotiate_total[2m]))", 120],
    ["sum(irate(negotiate_total[1m30s]))", 90],
    ["sum(increase(negotiate_total[5m])) / 300", 300],
    // the longest range of the expression
    ["sum(rate(a[1m])) + sum(rate(b[3m]))", 180],
    // a subquery holds a sample for its range plus what its inner query looks back
    ["max_over_time(sum(rate(negotiate_total[2m]))[10m:1m])", 720],
    // a range in seconds (PromQL 3)
    ["sum(rate(negotiate_total[90]))", 90],
  ])("%s: %i s", (query, seconds) => {
    expect(rateWindowSeconds(query)).toBe(seconds);
  });

  it.each([
    "sum(chat:negotiate:rate5m)", // a recording rule: its range is not in the query
    "sum(rate(negotiate_total[1w]))", // not a duration of the operator's units
    "sum(rate(negotiate_total[",
    "",
  ])("%j: the documented 1-minute range", (query) => {
    expect(rateWindowSeconds(query)).toBe(DEFAULT_RATE_RANGE_SECONDS);
  });
});
