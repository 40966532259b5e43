import { describe, expect, it } from "vitest";
import { FaultSpecError, FaultTable, globToRegExp } from "./faults.js";

describe("globToRegExp", () => {
  it("matches within and across segments, case-insensitively", () => {
    expect(
      globToRegExp("/subscriptions/*/resourceGroups/rg").test("/subscriptions/abc/resourcegroups/RG"),
    ).toBe(true);
    expect(globToRegExp("/subscriptions/*").test("/subscriptions/a/b")).toBe(false);
    expect(
      globToRegExp("**/SignalR/hub-1").test(
        "/subscriptions/a/resourceGroups/r/providers/Microsoft.SignalRService/signalR/hub-1",
      ),
    ).toBe(true);
    expect(
      globToRegExp("**/metrics:getBatch").test("/metrics/westeurope/subscriptions/s/metrics:getBatch"),
    ).toBe(true);
    expect(globToRegExp("/a.b").test("/aXb")).toBe(false);
  });
});

describe("FaultTable", () => {
  it("matches method and path, honours after and times, and counts", () => {
    const t = new FaultTable();
    const rule = t.add({
      method: "PATCH",
      path: "/x/**",
      after: 1,
      times: 2,
      action: { kind: "status", status: 409 },
    });
    expect(t.match({ method: "GET", path: "/x/y" })).toBeUndefined();
    expect(t.match({ method: "PATCH", path: "/x/y" })).toBeUndefined(); // let through by `after`
    expect(t.match({ method: "patch", path: "/x/y" })?.id).toBe(rule.id);
    expect(t.match({ method: "PATCH", path: "/x/z" })?.fired).toBe(2);
    expect(t.match({ method: "PATCH", path: "/x/z" })).toBeUndefined();
    expect(t.list()[0]).toMatchObject({ seen: 3, fired: 2 });
    expect(t.remove(rule.id)).toBe(true);
    expect(t.list()).toEqual([]);
  });

  it("matches getBatch rules by resource ID", () => {
    const t = new FaultTable();
    t.add({ path: "**", resourceIds: ["/A"], action: { kind: "nullSeries" } });
    expect(t.match({ method: "POST", path: "/m", resourceIds: ["/b"] })).toBeUndefined();
    expect(t.match({ method: "POST", path: "/m", resourceIds: ["/b", "/a"] })?.action.kind).toBe(
      "nullSeries",
    );
  });

  it("takes the update faults: cancelUpdate, longUpdate with seconds, respond with a body", () => {
    const t = new FaultTable();
    t.add({ path: "/a", action: { kind: "cancelUpdate" } });
    t.add({ path: "/b", action: { kind: "longUpdate", seconds: 7200 } });
    t.add({ path: "/c", action: { kind: "respond", body: { value: [] } } });
    expect(t.match({ method: "PATCH", path: "/a" })?.action).toEqual({ kind: "cancelUpdate" });
    expect(t.match({ method: "PATCH", path: "/b" })?.action).toEqual({ kind: "longUpdate", seconds: 7200 });
    expect(t.match({ method: "GET", path: "/c" })?.action).toEqual({ kind: "respond", body: { value: [] } });
  });

  it.each([
    [{}, "path"],
    [{ path: "/x" }, "action.kind"],
    [{ path: "/x", action: { kind: "explode" } }, "action.kind"],
    [{ path: "/x", action: { kind: "status", status: 99 } }, "action.status"],
    [{ path: "/x", times: -1, action: { kind: "reset" } }, "times"],
    [{ path: "/x", action: { kind: "delay" } }, "action.ms"],
    [{ path: "/x", action: { kind: "status", status: 429, retryAfterFormat: "hours" } }, "retryAfterFormat"],
    [{ path: "/x", action: { kind: "longUpdate" } }, "action.seconds"],
    [{ path: "/x", action: { kind: "longUpdate", seconds: -1 } }, "action.seconds"],
    [{ path: "/x", action: { kind: "respond", status: 700, body: {} } }, "action.status"],
    [{ path: "/x", action: { kind: "respond" } }, "action.body"],
  ])("rejects %j", (spec, field) => {
    expect(() => new FaultTable().add(spec as never)).toThrow(FaultSpecError);
    expect(() => new FaultTable().add(spec as never)).toThrow(field);
  });
});
