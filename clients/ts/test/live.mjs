// Live calls of the generated TypeScript client against a running node:
// search, create a customer key, purchase with it, list purchases, revoke
// it. BROLL_URL and BROLL_ROOT_KEY name the node and a root key with credit.
// Exits non-zero on the first call that does not answer as the contract says.
import assert from "node:assert/strict";
import { createBrollClient } from "../dist/index.js";

const base = process.env.BROLL_URL;
const root = createBrollClient(base, process.env.BROLL_ROOT_KEY);

const search = await root.GET("/api/v1/broll", { params: { query: { limit: 5 } } });
assert.equal(search.response.status, 200, JSON.stringify(search.error));
assert.ok(search.data.videos.length > 0, "search found no clip");
const video = search.data.videos[0].id;

const created = await root.POST("/api/v1/keys", { body: { customer_label: "ts client" } });
assert.equal(created.response.status, 201, JSON.stringify(created.error));
const customer = createBrollClient(base, created.data.api_key);

const bought = await customer.POST("/api/v1/broll/purchase", { body: { video_ids: [video] } });
assert.equal(bought.response.status, 200, JSON.stringify(bought.error));
assert.equal(bought.data.purchases[0].video_id, video);
assert.equal(bought.data.purchases[0].already_owned, false);

const listed = await customer.GET("/api/v1/broll/purchases", {});
assert.equal(listed.response.status, 200, JSON.stringify(listed.error));
assert.ok(listed.data.purchases.some((p) => p.video_id === video), "the purchase is not listed");

const revoked = await root.DELETE("/api/v1/keys", { params: { query: { id: created.data.details.id } } });
assert.equal(revoked.response.status, 200, JSON.stringify(revoked.error));
const refused = await customer.GET("/api/v1/balance", {});
assert.equal(refused.response.status, 401);
assert.equal(refused.error.code, "unauthorized");

process.stdout.write(JSON.stringify({ ok: true, video, purchase: bought.data.purchases[0].purchase_id }));
