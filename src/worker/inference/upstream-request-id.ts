/**
 * The X-Request-Id a backend is sent. vLLM takes that header as its engine's
 * request id, which it assumes unique: a second request with an id already
 * running is refused ("Request id … already running", vllm#10583), and with
 * several API servers duplicates reach the engine and break it (vllm#27723;
 * only vLLM releases with vllm#27987 add a suffix of their own). A client's
 * id is the client's to choose, so two clients — or one client reusing a
 * fixed id — would make one request cost another its answer. The backend
 * therefore gets the client's id (for tracing, it still leads) with a random
 * suffix; an id the gateway made (a UUID) is unique already and goes as is.
 * The client is told which id the backend saw (x-prefix-gateway-upstream-request-id).
 * The same rule, with the same suffix, makes a request id in the body unique
 * (upstream-body-ids.ts).
 */
import { hexPrefix } from "../sha256";

/** 48 random bits as 12 hex characters: no two requests in flight share one. One per request. */
export function requestIdSuffix(): string {
  return hexPrefix(crypto.getRandomValues(new Uint8Array(6)), 6);
}

/** A client's id made unique: the id leads (the client can still find it in the engine's logs). */
export function madeUnique(clientId: string, suffix: string): string {
  return `${clientId}-${suffix}`;
}

export function upstreamRequestId(requestId: string, fromClient: boolean, suffix: string): string {
  return fromClient ? madeUnique(requestId, suffix) : requestId;
}
