// The fetch under Broll: it adds the key and the user agent, gives each
// purchase and key creation an Idempotency-Key once, and retries what is
// safe to retry with exponential backoff and jitter, honouring Retry-After.
import { retryAfterMs } from "./errors.js";

export interface TransportOptions {
  apiKey: string;
  origin: string;
  userAgent: string;
  timeoutMs: number;
  maxRetries: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  fetch: typeof fetch;
}

// A Retry-After longer than this is handed to the caller as the error.
const maxRetryAfterMs = 60_000;
const safeMethods = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

// idempotentCreate: the requests the API deduplicates by Idempotency-Key.
function idempotentCreate(method: string, url: URL): boolean {
  return method === "POST" && (url.pathname.endsWith("/api/v1/broll/purchase") || url.pathname.endsWith("/api/v1/keys"));
}

// makeFetch returns the fetch; a streaming one (downloads) is not bound by
// timeoutMs, only by the request's own signal.
export function makeFetch(o: TransportOptions, streaming = false): (input: Request) => Promise<Response> {
  return async (input: Request) => {
    const url = new URL(input.url);
    const headers = new Headers(input.headers);
    if (url.origin === o.origin) headers.set("Authorization", `Bearer ${o.apiKey}`);
    headers.set("User-Agent", o.userAgent);
    if (idempotentCreate(input.method, url) && !headers.has("Idempotency-Key")) {
      headers.set("Idempotency-Key", crypto.randomUUID());
    }
    const replayable = headers.has("Idempotency-Key") || safeMethods.has(input.method);
    // Read once, so that every attempt sends the same bytes.
    const body = input.body ? await input.arrayBuffer() : undefined;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= o.maxRetries;
      let res: Response;
      try {
        res = await o.fetch(url, {
          method: input.method,
          headers,
          body,
          redirect: "follow",
          signal: streaming ? input.signal : AbortSignal.any([input.signal, AbortSignal.timeout(o.timeoutMs)]),
        });
      } catch (err) {
        if (last || !replayable || input.signal.aborted) throw err;
        await sleep(backoff(o, attempt), input.signal);
        continue;
      }
      if (last || !(await shouldRetry(res, replayable))) return res;
      const ra = retryAfterMs(res.headers);
      if (ra > maxRetryAfterMs) return res;
      await res.body?.cancel();
      await sleep(ra || backoff(o, attempt), input.signal);
    }
  };
}

// shouldRetry: a 429 (refused before it ran), a 503 or a 409
// idempotency_key_in_use of a request that is safe to send again.
async function shouldRetry(res: Response, replayable: boolean): Promise<boolean> {
  if (res.status === 429) return true;
  if (!replayable) return false;
  if (res.status === 503) return true;
  if (res.status === 409) {
    try {
      const p = (await res.clone().json()) as { code?: unknown };
      return p.code === "idempotency_key_in_use";
    } catch {
      return false;
    }
  }
  return false;
}

// backoff: minBackoffMs doubling per attempt up to maxBackoffMs, of which
// the upper half is random so that clients refused together spread out.
function backoff(o: TransportOptions, attempt: number): number {
  const ceil = Math.min(o.maxBackoffMs, o.minBackoffMs * 2 ** Math.min(attempt, 16));
  return ceil / 2 + Math.random() * (ceil / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
