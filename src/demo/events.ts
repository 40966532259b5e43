/**
 * The demo's Events, as the API server serves them: a watch on the namespace's Events that hands
 * the live view each one created (or repeated) after the initial list, at its own time.
 */
import type { CoreV1Event } from "@kubernetes/client-node";
import type { KubeClients } from "../kube/client.js";
import { type ResilientWatch, startResilientWatch } from "../kube/watch.js";
import type { LiveView } from "./live.js";

function eventTime(e: CoreV1Event): number | undefined {
  for (const v of [e.lastTimestamp, e.eventTime, e.firstTimestamp, e.metadata?.creationTimestamp]) {
    if (v === undefined || v === null) continue;
    const ms = v instanceof Date ? v.getTime() : Date.parse(String(v));
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

/** `{ member }` of an Event's object, when `memberOf` names one. */
function memberField(
  memberOf: ((objectName: string) => string | undefined) | undefined,
  ev: CoreV1Event,
): { member?: string } {
  const member = memberOf?.(ev.involvedObject?.name ?? "");
  return member !== undefined ? { member } : {};
}

/**
 * Watches the Events of `namespace` until `signal` aborts; those present at the first list are
 * skipped. `now` (virtual ms) times an Event that carries no time; `memberOf` names the member of
 * a replica group an Event's object (a CapacityPolicy's name) belongs to, if any.
 */
export function watchEvents(
  kube: KubeClients,
  namespace: string,
  live: LiveView,
  now: () => number,
  signal: AbortSignal,
  memberOf?: (objectName: string) => string | undefined,
): ResilientWatch<CoreV1Event> {
  let eventsSynced = false;
  const printed = new Map<string, number>();
  // Declared before the watch starts: the handler reads it (undefined until the watch is returned).
  let events: ResilientWatch<CoreV1Event> | undefined;
  events = startResilientWatch<CoreV1Event>({
    path: `/api/v1/namespaces/${namespace}/events`,
    watch: kube.watch,
    list: async () => {
      const list = await kube.core.listNamespacedEvent({ namespace });
      return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? "" };
    },
    signal,
    onEvent: (e) => {
      if (e.type === "synced") {
        if (e.initial) {
          eventsSynced = true;
          for (const item of events?.list() ?? []) printed.set(item.metadata?.uid ?? "", item.count ?? 1);
        }
        return;
      }
      if (!eventsSynced || e.type === "deleted") return;
      const ev = e.object;
      const uid = ev.metadata?.uid ?? "";
      const count = ev.count ?? 1;
      if ((printed.get(uid) ?? 0) >= count) return;
      printed.set(uid, count);
      live.event({
        ...memberField(memberOf, ev),
        time: eventTime(ev) ?? now(),
        type: ev.type ?? "Normal",
        reason: ev.reason ?? "",
        message: ev.message ?? "",
        count,
      });
    },
  });
  return events;
}
