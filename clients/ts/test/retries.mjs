// The hand-written layer of the TypeScript client through the scene that
// clients/retry_test.go sets up (BROLL_SCENE): a key limited to one request
// a minute, a proxy that answers 503 to its first request, a proxy that
// loses the answer of the first purchase. The Go test then checks what the
// node and the proxies saw (one charge, one Idempotency-Key per purchase).
import assert from "node:assert/strict";
import { Broll, BrollError, toCents } from "../dist/index.js";

const base = process.env.BROLL_URL;
const scene = JSON.parse(process.env.BROLL_SCENE);
const fast = (apiKey, baseUrl, maxRetries = 3) =>
  new Broll({ apiKey, baseUrl, maxRetries, minBackoffMs: 50, maxBackoffMs: 200, userAgent: "clients-test" });

// 429: refused, typed, without retries; waited out and answered with them.
const limited = fast(scene.limited_key, base);
await limited.balance();
await assert.rejects(fast(scene.limited_key, base, 0).balance(), (err) => {
  assert.ok(err instanceof BrollError, String(err));
  assert.equal(err.status, 429);
  assert.equal(err.code, "rate_limited");
  assert.equal(err.retryable, true);
  assert.ok(err.retryAfterMs > 0);
  return true;
});
await limited.balance();

// 503 with Retry-After: 1, then forwarded.
const flaky = await fast(scene.flaky_key, scene.flaky_url).purchase({ video_ids: [scene.flaky_video] });
assert.equal(toCents(flaky.total_charged), 500);

// The first answer lost after the node committed it: retried with the same
// Idempotency-Key, the replay is the first answer.
const dropped = await fast(scene.drop_key, scene.drop_url).purchase({ video_ids: [scene.drop_video] });
assert.equal(toCents(dropped.total_charged), 500);
assert.equal(dropped.purchases[0].already_owned, false);

// Typed errors and iterators.
const root = fast(scene.drop_key, base);
await assert.rejects(root.purchase({ video_ids: [crypto.randomUUID()] }), (err) => {
  assert.ok(err instanceof BrollError, String(err));
  assert.equal(err.code, "not_found");
  assert.equal(err.retryable, false);
  assert.ok(err.requestId);
  return true;
});
const seen = new Set();
for await (const v of root.videos({ limit: 2 })) {
  assert.ok(!seen.has(v.id), `clip ${v.id} listed twice`);
  seen.add(v.id);
}
assert.ok(seen.size >= 5, `videos() walked ${seen.size} clips`);
let purchases = 0;
for await (const _ of root.purchases({ limit: 1 })) purchases++;
assert.equal(purchases, 1);
for (const label of ["iter a", "iter b", "iter c"]) await root.createKey({ customer_label: label });
let keys = 0;
for await (const _ of root.keys({ limit: 1 })) keys++;
assert.equal(keys, 3);
process.stdout.write("ok\n");
