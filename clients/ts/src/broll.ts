// Broll: the client most programs want, a thin layer over the generated
// one (openapi-fetch over src/schema.ts): typed calls that return the
// answer or throw a BrollError, retries, an Idempotency-Key per purchase and
// key creation, and async iterators over the paged lists.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { BrollError } from "./errors.js";
import { makeFetch } from "./transport.js";

type Schemas = components["schemas"];
type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;
export type VideoQuery = QueryOf<"/api/v1/broll">;
export type PurchaseQuery = QueryOf<"/api/v1/broll/purchases">;
export type KeyQuery = QueryOf<"/api/v1/keys">;
export type CollectionQuery = QueryOf<"/api/v1/collections">;

export const VERSION = "1.0.0";

export interface BrollOptions {
  /** The bearer key (dsk_...). */
  apiKey: string;
  /** The API's origin, e.g. https://broll.example.com. */
  baseUrl: string;
  /** Bound on each attempt, answer body included, except a download's (abort that with a signal). Default 60000. */
  timeoutMs?: number;
  /** Retries after a 429, a 503, a 409 idempotency_key_in_use or a network error (where sending again cannot do it twice). Default 3; 0 for none. */
  maxRetries?: number;
  /** Put before this client's own user agent, e.g. "acme-app/2.1". */
  userAgent?: string;
  /** Backoff bounds when the server sends no Retry-After. Default 500 and 8000. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** The fetch to send with. Default: globalThis.fetch. */
  fetch?: typeof fetch;
}

/** Options of a purchase or key creation. */
export interface CreateOptions {
  /** Your own Idempotency-Key (1-255 printable ASCII), e.g. your order id; without it one is made per call and reused on its retries. */
  idempotencyKey?: string;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function unwrap<T>(r: Answer<T>): T {
  if (r.response.ok && r.data !== undefined) return r.data;
  throw BrollError.from(r.response, r.error);
}

export class Broll {
  /** The generated client, for every other route; it shares the key, retries and user agent. */
  readonly api: Client<paths>;
  private readonly send: (input: Request) => Promise<Response>;
  private readonly stream: (input: Request) => Promise<Response>;

  constructor(opts: BrollOptions) {
    if (!opts.apiKey) throw new TypeError("Broll: apiKey is required");
    const base = new URL(opts.baseUrl);
    const transport = {
      apiKey: opts.apiKey,
      origin: base.origin,
      userAgent: `${opts.userAgent ? `${opts.userAgent} ` : ""}brollclient-ts/${VERSION}`,
      timeoutMs: opts.timeoutMs ?? 60_000,
      maxRetries: Math.max(0, opts.maxRetries ?? 3),
      minBackoffMs: opts.minBackoffMs ?? 500,
      maxBackoffMs: Math.max(opts.maxBackoffMs ?? 8000, opts.minBackoffMs ?? 500),
      fetch: opts.fetch ?? globalThis.fetch,
    };
    this.send = makeFetch(transport);
    this.stream = makeFetch(transport, true);
    this.api = createClient<paths>({ baseUrl: opts.baseUrl.replace(/\/$/, ""), fetch: this.send });
  }

  /** Lists clips (GET /api/v1/broll); see videos() to walk every page. */
  async search(query: VideoQuery = {}): Promise<Schemas["VideoList"]> {
    return unwrap(await this.api.GET("/api/v1/broll", { params: { query } }));
  }

  /** One clip, with a fresh download_url when the key owns it. */
  async video(id: string): Promise<Schemas["Video"]> {
    return unwrap(await this.api.GET("/api/v1/broll/{id}", { params: { path: { id } } }));
  }

  /** Buys clips (all or nothing), charged once however many times the call is retried. */
  async purchase(body: Schemas["PurchaseRequest"], opts: CreateOptions = {}): Promise<Schemas["PurchaseResult"]> {
    const headers = opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : undefined;
    return unwrap(await this.api.POST("/api/v1/broll/purchase", { body, headers }));
  }

  /** The account's balance and this key's spending. */
  async balance(): Promise<Schemas["Balance"]> {
    return unwrap(await this.api.GET("/api/v1/balance", {}));
  }

  /** Makes a customer key (root keys only); the secret (api_key) is shown once. */
  async createKey(body: Schemas["KeyCreate"], opts: CreateOptions = {}): Promise<Schemas["KeyCreated"]> {
    const headers = opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : undefined;
    return unwrap(await this.api.POST("/api/v1/keys", { body, headers }));
  }

  /** Makes a collection, a shortlist of clips kept for the calling key, to add clips to and buy whole later (purchase with collection_id). Each call makes another one. */
  async createCollection(body: Schemas["CollectionCreate"]): Promise<Schemas["Collection"]> {
    return unwrap(await this.api.POST("/api/v1/collections", { body }));
  }

  /** Adds 1 to 50 clips to a collection of the calling key, after those it holds; a clip already there stays where it is, so it is safe to repeat. */
  async addToCollection(id: string, videoIds: string[]): Promise<Schemas["Collection"]> {
    return unwrap(await this.api.PUT("/api/v1/collections/{id}/items", { params: { path: { id } }, body: { video_ids: videoIds } }));
  }

  /** A collection with a page of its clips, in the order added; see collectionItems() to walk every clip. */
  async collection(id: string, query: { limit?: number; cursor?: string } = {}): Promise<Schemas["CollectionWithItems"]> {
    return unwrap(await this.api.GET("/api/v1/collections/{id}", { params: { path: { id }, query } }));
  }

  /** The file behind a purchase's download_url (a signed link). Use downloadResponse to stream a large one. */
  async download(downloadUrl: string): Promise<Uint8Array> {
    const res = await this.downloadResponse(downloadUrl);
    return new Uint8Array(await res.arrayBuffer());
  }

  /** The answer of a download_url, checked: its body streams the file. */
  async downloadResponse(downloadUrl: string, signal?: AbortSignal): Promise<Response> {
    const res = await this.stream(new Request(downloadUrl, { signal }));
    if (!res.ok) {
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        body = undefined;
      }
      throw BrollError.from(res, body);
    }
    return res;
  }

  /** Every clip the query selects, page after page (next_cursor). */
  async *videos(query: VideoQuery = {}): AsyncGenerator<Schemas["Video"]> {
    const { page: _p, offset: _o, ...q } = query;
    yield* pages(async (cursor) => {
      const r = await this.search({ ...q, cursor });
      return [r.videos, r.pagination.next_cursor];
    });
  }

  /** Every purchase the query selects, page after page. */
  async *purchases(query: PurchaseQuery = {}): AsyncGenerator<Schemas["PurchaseRecord"]> {
    const { page: _p, offset: _o, ...q } = query;
    yield* pages(async (cursor) => {
      const r = unwrap(await this.api.GET("/api/v1/broll/purchases", { params: { query: { ...q, cursor } } }));
      return [r.purchases, r.pagination.next_cursor];
    });
  }

  /** Every collection the calling key sees, newest first. */
  async *collections(query: CollectionQuery = {}): AsyncGenerator<Schemas["Collection"]> {
    yield* pages(async (cursor) => {
      const r = unwrap(await this.api.GET("/api/v1/collections", { params: { query: { ...query, cursor } } }));
      return [r.collections, r.pagination.next_cursor];
    });
  }

  /** Every clip of a collection, in the order added. */
  async *collectionItems(id: string): AsyncGenerator<Schemas["Video"]> {
    yield* pages(async (cursor) => {
      const r = await this.collection(id, { cursor });
      return [r.items, r.pagination.next_cursor];
    });
  }

  /** Every customer key of the calling root key that the query selects. */
  async *keys(query: KeyQuery = {}): AsyncGenerator<Schemas["Key"]> {
    yield* pages(async (cursor) => {
      const r = unwrap(await this.api.GET("/api/v1/keys", { params: { query: { ...query, cursor } } }));
      return [r.keys, r.pagination.next_cursor];
    });
  }
}

async function* pages<T>(next: (cursor: string | undefined) => Promise<[T[], string | null | undefined]>): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const [items, nextCursor] = await next(cursor);
    yield* items;
    if (!nextCursor || items.length === 0) return;
    cursor = nextCursor;
  }
}
