/**
 * The HTTP side of a query: undici's `fetch` through an undici `Agent` per CA bundle, and a body
 * read that stops at a size cap.
 *
 * Why undici's own `fetch` and not the platform's: a custom CA needs a dispatcher (`Agent` with
 * `connect.ca`), and the platform `fetch` only accepts dispatchers of the undici version bundled
 * in Node (7.x in Node 24) — an `Agent` of the pinned `undici` package (8.x, the one
 * `@kubernetes/client-node` already installs) fails there with `invalid onRequestStart method`.
 * `fetch` and `Agent` from the same package always agree.
 */
import { Agent, fetch, type Response } from "undici";

/** One `Agent` per CA bundle (and one for the system roots), closed together. */
export class Dispatchers {
  readonly #agents = new Map<string, Agent>();

  /** The agent that trusts `caPem` only (system roots when `undefined`). */
  get(caPem: string | undefined): Agent {
    const key = caPem ?? "";
    let agent = this.#agents.get(key);
    if (!agent) {
      agent = new Agent(caPem === undefined ? {} : { connect: { ca: caPem } });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** Closes every agent (their idle connections); in-flight requests are destroyed. */
  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((a) => a.destroy()));
  }
}

/** One request of a query, as `send` takes it. */
export interface HttpRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** Form body of a POST. */
  body?: string;
  signal: AbortSignal;
  dispatcher: Agent;
}

/** Sends `request`; redirects are returned, not followed. @throws what undici's `fetch` throws. */
export function send(request: HttpRequest): Promise<Response> {
  return fetch(request.url, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
    signal: request.signal,
    dispatcher: request.dispatcher,
    redirect: "manual",
  });
}

/**
 * The body as text, or `undefined` when it is longer than `maxBytes` (the rest is not read and
 * the stream is cancelled). @throws what the body stream throws (socket closed, abort).
 */
export async function readCapped(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return "";
  const decoder = new TextDecoder();
  let size = 0;
  let text = "";
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined;
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
