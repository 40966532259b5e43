/**
 * CapacityPolicy reads and status writes. The operator never writes `spec`: the only write here
 * is a JSON merge patch on the status subresource.
 */
import { type CapacityPolicy, GROUP, PLURAL, type StatusPatch, VERSION } from "../api/index.js";
import { FIELD_MANAGER, type KubeClients, mergePatchOptions } from "./client.js";
import { kubeCall } from "./errors.js";

/**
 * A JSON merge patch (RFC 7386) of `status`: objects merge key by key, `null` removes a field,
 * arrays (conditions, recommendations, ...) replace the stored array whole.
 */
export type { StatusPatch };

export interface PolicyList {
  readonly items: CapacityPolicy[];
  /** The list's resourceVersion: a watch started from it misses nothing. */
  readonly resourceVersion: string;
}

export interface ListPoliciesOptions {
  /** Page size; the pages together are one consistent snapshot. Default 500. */
  readonly pageSize?: number;
  readonly labelSelector?: string;
}

interface RawList {
  items?: unknown[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** Paths of the CapacityPolicy collection: all namespaces or one. */
export function policiesPath(namespace?: string): string {
  return namespace === undefined
    ? `/apis/${GROUP}/${VERSION}/${PLURAL}`
    : `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}`;
}

export class PolicyClient {
  constructor(
    private readonly clients: KubeClients,
    private readonly fieldManager: string = FIELD_MANAGER,
  ) {}

  /** Lists policies in `namespace`, or in all namespaces when it is undefined. */
  async list(namespace?: string, options: ListPoliciesOptions = {}): Promise<PolicyList> {
    const operation = `list ${PLURAL}${namespace === undefined ? "" : ` in ${namespace}`}`;
    const items: CapacityPolicy[] = [];
    let resourceVersion = "";
    let continueToken: string | undefined;
    await kubeCall(operation, async () => {
      do {
        const common = {
          group: GROUP,
          version: VERSION,
          limit: options.pageSize ?? 500,
          ...(continueToken === undefined ? {} : { _continue: continueToken }),
          ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
        };
        const page = (
          namespace === undefined
            ? await this.clients.customObjects.listCustomObjectForAllNamespaces({
                ...common,
                resourcePlural: PLURAL,
              })
            : await this.clients.customObjects.listNamespacedCustomObject({
                ...common,
                namespace,
                plural: PLURAL,
              })
        ) as RawList;
        for (const item of page.items ?? []) items.push(item as CapacityPolicy);
        resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
        const next = page.metadata?.continue;
        continueToken = next === undefined || next === "" ? undefined : next;
      } while (continueToken !== undefined);
    });
    return { items, resourceVersion };
  }

  /** Reads one policy; NotFoundError when it does not exist. */
  async get(namespace: string, name: string): Promise<CapacityPolicy> {
    return kubeCall(`get ${PLURAL} ${namespace}/${name}`, async () => {
      return (await this.clients.customObjects.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        name,
      })) as CapacityPolicy;
    });
  }

  /**
   * Merge-patches `status` through the status subresource and returns the stored policy.
   * With `resourceVersion`, the write only succeeds if the policy is unchanged since that version
   * (ConflictError otherwise: read again and recompute).
   */
  async patchStatus(
    namespace: string,
    name: string,
    statusPatch: StatusPatch,
    resourceVersion?: string,
  ): Promise<CapacityPolicy> {
    const body: Record<string, unknown> = { status: statusPatch };
    if (resourceVersion !== undefined) body["metadata"] = { resourceVersion };
    return kubeCall(`patch status of ${PLURAL} ${namespace}/${name}`, async () => {
      return (await this.clients.customObjects.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace,
          plural: PLURAL,
          name,
          body,
          fieldManager: this.fieldManager,
        },
        mergePatchOptions(),
      )) as CapacityPolicy;
    });
  }
}
