/**
 * A static allocation: one size provisioned for the whole run and never changed — by default the
 * oracle's peak need (`oracle.ts` `peakSize`), what capacity planning for the peak buys.
 */
import type { SkuUnits } from "../../capacity/index.js";
import type { Strategy } from "../engine.js";

/** A fixed size as a simulated strategy. */
export class StaticStrategy implements Strategy {
  readonly name = "static";
  readonly description: string;
  readonly initial: SkuUnits;
  readonly pollMinutes = 1;

  constructor(size: SkuUnits) {
    this.initial = { ...size };
    this.description = `static at peak: ${size.sku} ${size.units} units`;
  }

  poll(): SkuUnits | undefined {
    return undefined;
  }
}
