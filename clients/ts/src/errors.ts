// Errors of the API (RFC 9457 problem details), typed by their stable code.

// BrollError is thrown by every Broll method when the API answers with an
// error. Branch on `code` (e.g. "insufficient_credits"); `detail` is for
// people. `retryable` says whether the same call may succeed later (it was
// already retried `maxRetries` times).
export class BrollError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly type: string;
  readonly requestId: string;
  readonly retryable: boolean;
  /** The server's Retry-After in milliseconds, 0 when it sent none. */
  readonly retryAfterMs: number;
  /** Every member of the problem body, e.g. `required` and `available`. */
  readonly body: Record<string, unknown>;

  constructor(status: number, body: Record<string, unknown>, retryAfterMs: number) {
    const str = (k: string) => (typeof body[k] === "string" ? (body[k] as string) : "");
    const code = str("code") || "unexpected_response";
    const detail = str("detail");
    const requestId = str("request_id");
    super(`broll: ${status} ${code}${detail ? `: ${detail}` : ""}${requestId ? ` (request ${requestId})` : ""}`);
    this.name = "BrollError";
    this.status = status;
    this.code = code;
    this.title = str("title");
    this.detail = detail;
    this.type = str("type");
    this.requestId = requestId;
    this.retryAfterMs = retryAfterMs;
    this.body = body;
    this.retryable = retryableStatus(status) || code === "idempotency_key_in_use";
  }

  static from(response: Response, error: unknown): BrollError {
    const body = error !== null && typeof error === "object" ? (error as Record<string, unknown>) : {};
    return new BrollError(response.status, body, retryAfterMs(response.headers));
  }
}

// retryableStatus: too many requests, and a node briefly unable to answer.
export function retryableStatus(status: number): boolean {
  return status === 429 || status === 503;
}

// retryAfterMs reads Retry-After (seconds or an HTTP date); 0 when absent.
export function retryAfterMs(headers: Headers): number {
  const v = headers.get("Retry-After");
  if (!v) return 0;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? 0 : Math.max(0, at - Date.now());
}
