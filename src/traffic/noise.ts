/**
 * Deterministic noise: the same seed and step always give the same value, so a replay of the
 * same minutes gives the same metrics. Pure.
 */

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** A value in [−1, 1] for `seed` at integer `step` (e.g. the minute number); `channel` separates independent streams. */
export function noise(seed: string, step: number, channel = 0): number {
  const h = mix32(
    fnv1a(seed) ^ mix32(Math.floor(step) | 0) ^ mix32(Math.floor(step / 2 ** 32) | 0) ^ mix32(channel * 7919),
  );
  return (h / 0xffffffff) * 2 - 1;
}
