import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SECRET_SAMPLES } from "../shared/redact-samples.js";
import { createLogger, scrubSecrets } from "./logging.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { lines, destination };
}

describe("logging", () => {
  it("writes JSON with policy context and redacts secrets", () => {
    const { lines, destination } = capture();
    const log = createLogger({ level: "info", destination });
    log.child({ namespace: "chat", policy: "hub" }).info(
      {
        token: "abc",
        request: { headers: { authorization: "Bearer xyz" } },
        credential: { clientSecret: "s" },
      },
      "pass",
    );
    const line = lines[0] as Record<string, unknown>;
    expect(line).toMatchObject({ namespace: "chat", policy: "hub", msg: "pass", token: "[redacted]" });
    expect(JSON.stringify(line)).not.toMatch(/xyz|"abc"|"s"/);
  });

  it("honours the level", () => {
    const { lines, destination } = capture();
    createLogger({ level: "warn", destination }).info("hidden");
    expect(lines).toHaveLength(0);
  });

  it("scrubs bearer tokens, JWTs and connection-string keys from text", () => {
    const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl";
    const text = `Authorization: Bearer abc.def; Endpoint=https://x;AccessKey=SECRETKEY==;Version=1.0; ${jwt}`;
    const out = scrubSecrets(text);
    expect(out).not.toContain("abc.def");
    expect(out).not.toContain("SECRETKEY");
    expect(out).not.toContain(jwt);
    expect(out).toContain("Endpoint=https://x");
  });

  it.each(SECRET_SAMPLES)(
    "never writes $name: in the message, a field or an error",
    ({ text, secret, kept }) => {
      const { lines, destination } = capture();
      const log = createLogger({ level: "info", destination });
      log.warn({ err: new Error(text), reason: text }, text);
      log.error(new Error(text));
      expect(lines).toHaveLength(2);
      const written = JSON.stringify(lines);
      expect(written).not.toContain(secret);
      expect(String(lines[0]?.["msg"])).toContain(kept);
    },
  );
});
