// Live calls of the generated TypeScript client against a running node:
// search, create a customer key, purchase with it, list purchases,
// shortlist the clips in a collection and buy it whole (the clip bought
// before skipped), revoke it. BROLL_URL and BROLL_ROOT_KEY name the node and a root key with credit.
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

// The collections quickstart's steps: make, fill, read back in order,
// quote and buy whole.
const made = await customer.POST("/api/v1/collections", { body: { name: "ts client shortlist" } });
assert.equal(made.response.status, 201, JSON.stringify(made.error));
const col = made.data.id;
const all = search.data.videos.map((v) => v.id).reverse(); // an order of our own
const added = await customer.PUT("/api/v1/collections/{id}/items", { params: { path: { id: col } }, body: { video_ids: all } });
assert.equal(added.response.status, 200, JSON.stringify(added.error));
assert.equal(added.data.item_count, all.length);
const got = await customer.GET("/api/v1/collections/{id}", { params: { path: { id: col } } });
assert.equal(got.response.status, 200, JSON.stringify(got.error));
assert.deepEqual(got.data.items.map((v) => v.id), all);
assert.deepEqual(got.data.items.map((v) => v.owned), all.map((id) => id === video));
const quote = await customer.POST("/api/v1/broll/purchase", { body: { collection_id: col, dry_run: true } });
assert.equal(quote.response.status, 200, JSON.stringify(quote.error));
assert.equal(quote.data.purchases.length, all.length - 1);
const whole = await customer.POST("/api/v1/broll/purchase", { body: { collection_id: col, expected_total: quote.data.total_charged } });
assert.equal(whole.response.status, 200, JSON.stringify(whole.error));
assert.equal(whole.data.total_charged, quote.data.total_charged);
assert.deepEqual(whole.data.skipped, [{ video_id: video, reason: "already_owned" }]);

const revoked = await root.DELETE("/api/v1/keys", { params: { query: { id: created.data.details.id } } });
assert.equal(revoked.response.status, 200, JSON.stringify(revoked.error));
const refused = await customer.GET("/api/v1/balance", {});
assert.equal(refused.response.status, 401);
assert.equal(refused.error.code, "unauthorized");

process.stdout.write(JSON.stringify({ ok: true, video, purchase: bought.data.purchases[0].purchase_id }));
