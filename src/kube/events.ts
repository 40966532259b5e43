/**
 * core/v1 Events about CapacityPolicies (what `kubectl describe capol` shows), with a small
 * aggregation: the same type + reason + message about the same object within `dedupeWindowMs`
 * of its last occurrence bumps `count` and `lastTimestamp` of the existing Event instead of
 * creating another one.
 */
import type { CoreV1Event } from "@kubernetes/client-node";
import { API_VERSION, type CapacityPolicy, KIND } from "../api/index.js";
import { FIELD_MANAGER, type KubeClients, mergePatchOptions } from "./client.js";
import { kubeCall, NotFoundError, toKubeError } from "./errors.js";

export type EventType = "Normal" | "Warning";

/** The object an Event is about (its involvedObject). */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
}

export interface EventInput {
  readonly type: EventType;
  /** CamelCase, machine-readable, e.g. "ScaledUp". */
  readonly reason: string;
  /** Human-readable; cut to 1024 characters. */
  readonly message: string;
  /** What was done, e.g. "Scale". Optional for core/v1 Events. */
  readonly action?: string;
}

export interface RecordedEvent {
  readonly namespace: string;
  readonly name: string;
  readonly count: number;
  /** True when a new Event object was created, false when an existing one was bumped. */
  readonly created: boolean;
}

export interface EventRecorderOptions {
  /** `reportingComponent` and `source.component`. Default "signalr-autoscaler". */
  readonly component?: string;
  /** `reportingInstance` and `source.host`, e.g. the pod name. */
  readonly instance?: string;
  /** Aggregate repeats within this long after the previous one, ms. Default 10 minutes. */
  readonly dedupeWindowMs?: number;
  /** Most remembered Events. Default 1000. */
  readonly maxEntries?: number;
  /** Randomness for Event names. Default Math.random. */
  readonly random?: () => number;
}

const MAX_EVENT_MESSAGE_LENGTH = 1024;

/** The involvedObject for a CapacityPolicy. */
export function policySubject(policy: CapacityPolicy): EventSubject {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    namespace: policy.metadata.namespace,
    name: policy.metadata.name,
    uid: policy.metadata.uid,
    resourceVersion: policy.metadata.resourceVersion,
  };
}

interface Entry {
  readonly namespace: string;
  readonly name: string;
  count: number;
  lastMs: number;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

export class EventRecorder {
  private readonly component: string;
  private readonly instance: string | undefined;
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly random: () => number;
  private readonly entries = new Map<string, Entry>();
  /** Per-key chains, so concurrent records of one event are applied one after the other. */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly clients: KubeClients,
    options: EventRecorderOptions = {},
  ) {
    this.component = options.component ?? FIELD_MANAGER;
    this.instance = options.instance;
    this.windowMs = options.dedupeWindowMs ?? 10 * 60_000;
    this.maxEntries = options.maxEntries ?? 1000;
    this.random = options.random ?? Math.random;
  }

  /** Records `event` about `subject` at `now` (creates an Event, or bumps a recent identical one). */
  record(subject: EventSubject, event: EventInput, now: Date): Promise<RecordedEvent> {
    const message = truncate(event.message, MAX_EVENT_MESSAGE_LENGTH);
    const key = JSON.stringify([
      subject.namespace,
      subject.kind,
      subject.name,
      subject.uid ?? "",
      event.type,
      event.reason,
      message,
    ]);
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() => this.recordNow(key, subject, { ...event, message }, now));
    this.chains.set(key, next);
    void next
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  private async recordNow(
    key: string,
    subject: EventSubject,
    event: EventInput,
    now: Date,
  ): Promise<RecordedEvent> {
    const nowMs = now.getTime();
    this.evict(nowMs);
    const entry = this.entries.get(key);
    if (entry !== undefined && nowMs - entry.lastMs <= this.windowMs) {
      try {
        const count = entry.count + 1;
        await this.clients.core.patchNamespacedEvent(
          {
            namespace: entry.namespace,
            name: entry.name,
            body: { count, lastTimestamp: now.toISOString() },
            fieldManager: FIELD_MANAGER,
          },
          mergePatchOptions(),
        );
        entry.count = count;
        entry.lastMs = nowMs;
        this.entries.delete(key);
        this.entries.set(key, entry); // most recent last
        return { namespace: entry.namespace, name: entry.name, count, created: false };
      } catch (err) {
        const error = toKubeError(err, `patch events ${entry.namespace}/${entry.name}`);
        if (!(error instanceof NotFoundError)) throw error;
        this.entries.delete(key); // expired (Event TTL) or deleted: create a new one
      }
    }
    const created = await this.create(subject, event, now);
    this.entries.set(key, { namespace: created.namespace, name: created.name, count: 1, lastMs: nowMs });
    this.evict(nowMs);
    return created;
  }

  private async create(subject: EventSubject, event: EventInput, now: Date): Promise<RecordedEvent> {
    const suffix = `${now.getTime().toString(16)}${Math.floor(this.random() * 0x10000)
      .toString(16)
      .padStart(4, "0")}`;
    const name = `${subject.name.slice(0, 253 - suffix.length - 1)}.${suffix}`;
    const body: CoreV1Event = {
      metadata: { name, namespace: subject.namespace },
      involvedObject: {
        apiVersion: subject.apiVersion,
        kind: subject.kind,
        namespace: subject.namespace,
        name: subject.name,
        ...(subject.uid === undefined ? {} : { uid: subject.uid }),
        ...(subject.resourceVersion === undefined ? {} : { resourceVersion: subject.resourceVersion }),
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      ...(event.action === undefined ? {} : { action: event.action }),
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.component, ...(this.instance === undefined ? {} : { host: this.instance }) },
      reportingComponent: this.component,
      reportingInstance: this.instance ?? "",
    };
    return kubeCall(`create events in ${subject.namespace}`, async () => {
      const stored = await this.clients.core.createNamespacedEvent({ namespace: subject.namespace, body });
      return { namespace: subject.namespace, name: stored.metadata?.name ?? name, count: 1, created: true };
    });
  }

  /** Forgets entries outside the window, then the oldest beyond maxEntries. */
  private evict(nowMs: number): void {
    for (const [key, entry] of this.entries) {
      if (nowMs - entry.lastMs > this.windowMs) this.entries.delete(key);
    }
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }
}
