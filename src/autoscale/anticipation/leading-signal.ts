/**
 * The LeadingSignal rule: `leading.ts` on the app servers' negotiate rate (or client connections)
 * read from Prometheus: the connections it brings by the target time, without Azure Monitor's
 * ingestion delay and without the cap of a full quota. Its state is kept in
 * `status.anticipation.leading`. Pure.
 */
import { leadingSignal } from "../leading.js";
import type { Rule, RuleContext, RuleResult } from "./rule.js";

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
    connections: ctx.demand.find((d) => d.signal === "connections"),
    previous: ctx.previous?.leading,
  });
  const status = { leading: lead.status };
  if (!(lead.ask && lead.ask.units > 0)) return { asks: [], status };
  return { asks: [{ rule: "LeadingSignal", ...lead.ask }], status };
}
