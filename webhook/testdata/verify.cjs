// Verifies webhook messages with the standardwebhooks npm package: reads
// {"secrets": [...], "messages": [{"headers": {...}, "body": "..."}]} on
// stdin and exits non-zero unless every message verifies with every secret.
const { Webhook } = require("standardwebhooks");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
let n = 0;
for (const m of input.messages) {
  for (const s of input.secrets) {
    const payload = new Webhook(s).verify(m.body, m.headers);
    if (!payload || !payload.id) throw new Error("verified payload without an id");
    n++;
  }
}
process.stdout.write(JSON.stringify({ verified: n }));
