// Money both ways through the TypeScript client: for each case (a clip
// priced at `cents` and a key whose balance is exactly that), the balance and
// the price read back to the exact cents with toCents, the purchase sent with
// expected_total = fromCents(cents) is accepted (a cent off would be 409
// price_changed), and the balance after it is zero. BROLL_URL names the node,
// BROLL_MONEY_CASES is the JSON list of cases.
import assert from "node:assert/strict";
import { createBrollClient, toCents, fromCents } from "../dist/index.js";

const base = process.env.BROLL_URL;
for (const { cents, video, key } of JSON.parse(process.env.BROLL_MONEY_CASES)) {
  const c = createBrollClient(base, key);
  const bal = await c.GET("/api/v1/balance", {});
  assert.equal(bal.response.status, 200, JSON.stringify(bal.error));
  assert.equal(toCents(bal.data.balance), cents, `balance ${bal.data.balance}`);
  const v = await c.GET("/api/v1/broll/{id}", { params: { path: { id: video } } });
  assert.equal(v.response.status, 200, JSON.stringify(v.error));
  assert.equal(toCents(v.data.price), cents, `price ${v.data.price}`);
  const bought = await c.POST("/api/v1/broll/purchase", { body: { video_ids: [video], expected_total: fromCents(cents) } });
  assert.equal(bought.response.status, 200, JSON.stringify(bought.error));
  assert.equal(toCents(bought.data.total_charged), cents);
  assert.equal(toCents(bought.data.purchases[0].price_paid), cents);
  assert.equal(toCents(bought.data.balance), 0);
}
process.stdout.write("ok\n");
