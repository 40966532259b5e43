/**
 * Kubernetes connection: a KubeConfig from a file, the in-cluster service account or the default
 * loading rules, and the typed API clients built from it once and handed down to the adapters.
 */
import {
  ApiextensionsV1Api,
  AppsV1Api,
  AutoscalingV2Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  createConfiguration,
  KubeConfig,
  type Middleware,
  PatchStrategy,
  type RequestContext,
  ServerConfiguration,
  setHeaderOptions,
  Watch,
} from "@kubernetes/client-node";

/** Field manager (and User-Agent product) the operator writes with. */
export const FIELD_MANAGER = "signalr-autoscaler";

export type KubeConfigSource =
  /** A kubeconfig file; `context` overrides its current-context. */
  | { readonly kind: "file"; readonly path: string; readonly context?: string }
  /** The pod's service account (KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/serviceaccount). */
  | { readonly kind: "inCluster" }
  /** $KUBECONFIG, then ~/.kube/config, then in-cluster (client-node's default loading rules). */
  | { readonly kind: "default"; readonly context?: string };

/**
 * A KubeConfig whose API calls share one connection pool. client-node 2.0 builds a new dispatcher
 * (and so a new TLS connection) for every request; at 1,000 policies that doubled the CPU per pass
 * and added about 100 MB of memory (see docs/benchmark.md). Authentication headers are still applied
 * per request; only the transport is shared.
 */
export class PooledKubeConfig extends KubeConfig {
  #dispatcher: ReturnType<RequestContext["getDispatcher"]>;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (fresh === undefined) return;
    if (this.#dispatcher === undefined) {
      this.#dispatcher = fresh;
      return;
    }
    context.setDispatcher(this.#dispatcher);
    void fresh.close();
  }
}

/** Loads a KubeConfig. Throws when the source is unusable (missing file, no current cluster). */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  const kc = new PooledKubeConfig();
  switch (source.kind) {
    case "file":
      kc.loadFromFile(source.path);
      break;
    case "inCluster": {
      const host = process.env["KUBERNETES_SERVICE_HOST"];
      if (host === undefined || host === "") {
        throw new Error("not running in a cluster: KUBERNETES_SERVICE_HOST is not set");
      }
      kc.loadFromCluster();
      break;
    }
    case "default":
      kc.loadFromDefault();
      break;
  }
  if (source.kind !== "inCluster" && source.context !== undefined) {
    if (kc.getContextObject(source.context) === null) {
      throw new Error(`kubeconfig has no context '${source.context}'`);
    }
    kc.setCurrentContext(source.context);
  }
  if (kc.getCurrentCluster() === null) {
    throw new Error(`kubeconfig (${source.kind}) has no current cluster`);
  }
  return kc;
}

export interface KubeClientsOptions {
  /** Per-request timeout of the typed clients (not of watches), ms. Default 30 000. */
  readonly requestTimeoutMs?: number;
  /** User-Agent header. Default `signalr-autoscaler`. */
  readonly userAgent?: string;
}

/** The typed API clients of one KubeConfig. Build once with `createKubeClients` and pass down. */
export interface KubeClients {
  readonly kubeConfig: KubeConfig;
  /** The API server URL of the current context. */
  readonly server: string;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly autoscaling: AutoscalingV2Api;
  readonly coordination: CoordinationV1Api;
  readonly customObjects: CustomObjectsApi;
  readonly apiextensions: ApiextensionsV1Api;
  /** Streaming watches (client-node's Watch: one HTTP request per `watch()` call). */
  readonly watch: Watch;
}

type ApiClass<T> = new (configuration: ReturnType<typeof createConfiguration>) => T;

/** Default deadline of one Kubernetes API call (not of watches): 30 seconds. */
export const DEFAULT_KUBE_REQUEST_TIMEOUT_MS = 30_000;

export function createKubeClients(kubeConfig: KubeConfig, options: KubeClientsOptions = {}): KubeClients {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error("kubeconfig has no current cluster");
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_KUBE_REQUEST_TIMEOUT_MS;
  const userAgent = options.userAgent ?? FIELD_MANAGER;
  const middleware: Middleware = {
    pre: async (request) => {
      request.setHeaderParam("User-Agent", userAgent);
      if (request.getSignal() === undefined) request.setSignal(AbortSignal.timeout(timeoutMs));
      return request;
    },
    post: async (response) => response,
  };
  const make = <T>(Api: ApiClass<T>): T =>
    new Api(
      createConfiguration({
        baseServer: new ServerConfiguration(cluster.server, {}),
        authMethods: { default: kubeConfig },
        promiseMiddleware: [middleware],
      }),
    );
  return {
    kubeConfig,
    server: cluster.server,
    core: make(CoreV1Api),
    apps: make(AppsV1Api),
    autoscaling: make(AutoscalingV2Api),
    coordination: make(CoordinationV1Api),
    customObjects: make(CustomObjectsApi),
    apiextensions: make(ApiextensionsV1Api),
    watch: new Watch(kubeConfig),
  };
}

/** Per-call options that send a body as a JSON merge patch (RFC 7386). */
export function mergePatchOptions(): ReturnType<typeof setHeaderOptions> {
  return setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
}
