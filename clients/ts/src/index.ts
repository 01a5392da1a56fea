// The B-roll API client. Broll (src/broll.ts) is the client most programs
// want; createBrollClient is the bare generated client (openapi-fetch over
// the types openapi-typescript generates from api/openapi.json into
// src/schema.ts, `make clients`).
import createClient from "openapi-fetch";
import type { paths, components } from "./schema.js";

export type { paths, components };
export type Schemas = components["schemas"];

// createBrollClient returns a bare typed client that sends key as the
// bearer key: no retries, no idempotency keys.
export function createBrollClient(baseUrl: string, key: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });
}

export { Broll, VERSION } from "./broll.js";
export type { BrollOptions, CreateOptions, VideoQuery, PurchaseQuery, KeyQuery, CollectionQuery } from "./broll.js";
export { BrollError } from "./errors.js";
export { toCents, fromCents, formatCents } from "./money.js";
