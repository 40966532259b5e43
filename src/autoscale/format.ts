/**
 * The one number format of every message the decision, `recommend` and `check` print.
 */

/** One formatter for every message: building one per call dominated long simulations. */
const NUMBER_FORMAT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

/** Formats a number for messages: at most two decimals, thousands separated ("12,345.68"). */
export function fmt(n: number): string {
  return NUMBER_FORMAT.format(n);
}

/** A fraction (0.49) as a whole percentage for messages ("49 %"). */
export function percentText(fraction: number): string {
  return `${Math.round(fraction * 100)} %`;
}
