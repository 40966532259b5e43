/**
 * The LeadingSignal rule: `leading.ts` on the app servers' negotiate rate (or client connections)
 * read from Prometheus: the connections it brings by the target time, without Azure Monitor's
 * ingestion delay and without the cap of a full quota. Its state is kept in
 * `status.anticipation.leading`. Pure.
 */
import { clientsDisconnected } from "../../traffic/disconnections.js";
import type { ScaleEvent } from "../history.js";
import { leadingSignal, type UnitChangeReconnects } from "../leading.js";
import type { Rule, RuleContext, RuleResult } from "./rule.js";

/**
 * The recent unit changes (ours, or found on the instance) and the clients each disconnected, by
 * the traffic model's own count (`clientsDisconnected` under `ctx.disconnection`: the removed
 * units' share of the connections at a scale-in, or every client at any change of units or SKU
 * under `Everyone`) of the connections before it (its stored levels, else Azure's newest
 * connection need), for the leading signal's reconnect discount (`leading.ts`).
 */
export function changeReconnects(ctx: RuleContext): UnitChangeReconnects[] {
  const newest = ctx.demand.find((d) => d.signal === "connections")?.points.at(-1);
  const fallback = newest ? newest.units * ctx.connectionsPerUnit : undefined;
  return ctx.scaleEvents.flatMap((e: ScaleEvent) => {
    const observedMs = Date.parse(e.time);
    const sent = e.startedAt ? Date.parse(e.startedAt) : observedMs;
    const startedMs = Number.isFinite(sent) ? sent : observedMs;
    const connections = e.before?.connections ?? fallback;
    const known = connections !== undefined && Number.isFinite(connections) && connections >= 0;
    if (!Number.isFinite(observedMs) || !known || !(e.fromUnits > 0) || !(e.toUnits > 0)) return [];
    const change = {
      connections,
      fromUnits: e.fromUnits,
      toUnits: e.toUnits,
      skuChanges: e.fromSku !== e.toSku,
    };
    const disconnected = clientsDisconnected(change, ctx.disconnection);
    return disconnected > 0 ? [{ startedMs, observedMs, disconnected }] : [];
  });
}

export const leadingSignalRule: Rule = { rule: "LeadingSignal", evaluate: evaluateLeadingSignal };

/** The LeadingSignal rule (see the module comment): no asks and no status when the spec turns it off. */
function evaluateLeadingSignal(ctx: RuleContext): RuleResult {
  const spec = ctx.spec.leadingSignal;
  if (!spec) return { asks: [] };
  const lead = leadingSignal({
    spec,
    observation: ctx.leading,
    nowMs: ctx.nowMs,
    targetMs: ctx.targetMs,
    connectionsPerUnit: ctx.connectionsPerUnit,
    tolerance: ctx.tolerance,
    connections: ctx.demand.find((d) => d.signal === "connections"),
    previous: ctx.previous?.leading,
    changes: changeReconnects(ctx),
  });
  const status = { leading: lead.status };
  if (!(lead.ask && lead.ask.units > 0)) return { asks: [], status };
  return { asks: [{ rule: "LeadingSignal", ...lead.ask }], status };
}
