/**
 * One key of a Secret (a leading signal's bearer token or CA bundle, named by a policy in its own
 * namespace). Read on demand; the caller caches.
 */
import type { KubeClients } from "./client.js";
import { kubeCall, NotFoundError } from "./errors.js";

/**
 * The value of `key` in Secret `namespace/name`, decoded from base64 as UTF-8 text.
 * @throws KubeError (NotFound when the Secret is absent, Forbidden without `get` on Secrets);
 *   NotFoundError when the Secret has no such key.
 */
export async function readSecretKey(
  clients: KubeClients,
  namespace: string,
  name: string,
  key: string,
): Promise<string> {
  const secret = await kubeCall(`get Secret ${namespace}/${name}`, () =>
    clients.core.readNamespacedSecret({ namespace, name }),
  );
  const value = secret.data?.[key];
  if (value === undefined) {
    throw new NotFoundError(`no key ${key}`, { operation: `get Secret ${namespace}/${name}` });
  }
  return Buffer.from(value, "base64").toString("utf8");
}
