import { describe, expect, it } from "vitest";
import { REDACTED, scrubSecrets } from "./redact.js";
import { SECRET_SAMPLES } from "./redact-samples.js";

describe("scrubSecrets", () => {
  it.each(SECRET_SAMPLES)("removes $name and keeps the rest", ({ text, secret, kept }) => {
    const out = scrubSecrets(text);
    expect(text).toContain(secret);
    expect(out).not.toContain(secret);
    expect(out).toContain(kept);
    expect(out).toContain(REDACTED);
    expect(scrubSecrets(out)).toBe(out);
  });

  it.each(SECRET_SAMPLES)("removes $name from a JSON line and leaves it valid JSON", ({ text, secret }) => {
    const line = JSON.stringify({
      level: 50,
      msg: text,
      err: { message: text, nested: JSON.stringify({ text }) },
    });
    const out = scrubSecrets(line);
    expect(out).not.toContain(secret);
    expect(() => JSON.parse(out)).not.toThrow();
  });

  it("leaves the Prometheus text format and ordinary text alone", () => {
    const exposition = [
      "# HELP signalr_autoscaler_arm_remaining_requests ARM remaining-quota headers by scope and kind",
      'signalr_autoscaler_arm_remaining_requests{scope="sub/westeurope",kind="subscription-reads"} 249',
      'x_total{key="a",token="b",api="GET SignalR",status="429"} 3',
    ].join("\n");
    expect(scrubSecrets(exposition)).toBe(exposition);
    for (const text of [
      "instances.get (sub/westeurope): throttled (429 SubscriptionRequestsThrottled); retry after 20s",
      "Endpoint=https://chat.service.signalr.net;Version=1.0;",
      "https://prometheus.example.com:9090/api/v1/query?query=rate(x[1m])",
      "policy watch not healthy: connect ECONNREFUSED 127.0.0.1:6443",
    ]) {
      expect(scrubSecrets(text)).toBe(text);
    }
  });

  it("keeps the scheme of an Authorization header", () => {
    expect(scrubSecrets("Authorization: Bearer abc.def; next")).toBe(
      "Authorization: Bearer [redacted]; next",
    );
    expect(scrubSecrets("authorization=Basic dXNlcjpwYXNz")).toBe("authorization=Basic [redacted]");
    expect(scrubSecrets("Authorization: opaque-credential")).toBe("Authorization: [redacted]");
  });

  it("keeps a pino-redacted member as it is", () => {
    const line = '{"token":"[redacted]","headers":{"authorization":"[redacted]"},"msg":"x"}';
    expect(scrubSecrets(line)).toBe(line);
  });
});
