/**
 * When a policy is polled next.
 *
 * Policies are read from Azure together, one poll cycle for every policy due at a tick (instances
 * by subscription, metrics in getBatch groups of ≤ 50). That batching holds only while policies
 * stay due together. Counting the next poll from the end of each pass lets them drift apart by
 * their pass and queue times, cycle after cycle, until every tick reads a handful of policies and
 * the calls per interval grow towards one per policy. So the next poll is put on a grid of the
 * interval (multiples of it since the epoch): every policy with the same interval, or with one
 * that divides it, is due at the same instant whenever it was created or last changed.
 */

/**
 * The next poll time of a policy read at `readAt` (ms since the epoch) with the interval
 * `intervalMs`: the first multiple of the interval at least half an interval after `readAt`.
 * A policy already on the grid (read just after its due time) is polled again exactly one interval
 * later; one off the grid (new, changed, retried) joins it within half to one and a half intervals.
 * `readAt` itself for an interval that is not positive.
 */
export function nextPollTime(readAt: number, intervalMs: number): number {
  if (!(intervalMs > 0) || !Number.isFinite(readAt)) return readAt;
  return Math.ceil((readAt + intervalMs / 2) / intervalMs) * intervalMs;
}
