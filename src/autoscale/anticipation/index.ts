/**
 * The anticipation rules, in the order they are evaluated: a new rule is a new file here
 * implementing {@link Rule} and one entry of {@link RULES}, and its name in the schema's
 * `ANTICIPATION_RULES` (src/api/schema.ts); then `npm run gen:crds` writes the CRD and
 * docs/capacitypolicy.md, which list the names. docs/anticipation.md describes each rule.
 */
import { censoredDemandRule } from "./censored-demand.js";
import { failoverRule } from "./failover.js";
import { headroomRule } from "./headroom.js";
import { leadingSignalRule } from "./leading-signal.js";
import type { Rule } from "./rule.js";
import { seasonalRule } from "./seasonal.js";
import { trendRule } from "./trend.js";

/** Every rule, in evaluation order (their asks, and what they keep in status, follow it). */
export const RULES: readonly Rule[] = [
  trendRule,
  censoredDemandRule,
  headroomRule,
  seasonalRule,
  leadingSignalRule,
  failoverRule,
];
