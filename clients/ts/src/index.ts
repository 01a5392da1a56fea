// The B-roll API client: openapi-fetch over the types openapi-typescript
// generates from api/openapi.json (src/schema.d.ts, `make clients`).
import createClient from "openapi-fetch";
import type { paths, components } from "./schema.js";

export type { paths, components };
export type Schemas = components["schemas"];

// createBrollClient returns a typed client that sends key as the bearer key.
export function createBrollClient(baseUrl: string, key: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });
}

export { toCents, fromCents, formatCents } from "./money.js";
