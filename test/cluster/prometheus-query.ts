/** Instant queries against a real Prometheus at a chosen (virtual) time, for tests (not a test file). */
import { expect } from "vitest";

/** One series of a query's result: an instant vector's `value` or a range vector's `values`. */
export interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

/**
 * GET /api/v1/query of `expr` at `timeMs` (epoch ms); the result's series.
 * @throws Error when Prometheus answers with an error (its message), or after 5 s.
 */
export async function query(url: string, expr: string, timeMs: number): Promise<Sample[]> {
  const params = new URLSearchParams({ query: expr, time: (timeMs / 1000).toFixed(3) });
  const res = await fetch(`${url}/api/v1/query?${params}`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { status: string; error?: string; data: { result: Sample[] } };
  if (body.status !== "success") throw new Error(`${expr}: ${body.error ?? res.status}`);
  return body.data.result;
}

/** The one value of an instant vector at `timeMs`, or undefined when it is empty; fails on several. */
export async function scalar(url: string, expr: string, timeMs: number): Promise<number | undefined> {
  const result = await query(url, expr, timeMs);
  expect(result.length).toBeLessThanOrEqual(1);
  const value = result[0]?.value?.[1];
  return value === undefined ? undefined : Number(value);
}
