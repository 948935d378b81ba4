// The OpenAI Node SDK, with captureFetch, against a real `custody serve`
// (started by clients/js/js_test.go, which sets CUSTODY_URL, CUSTODY_KEY
// and CUSTODY_VKEY, the log's key read from the gateway's data dir: pinned
// out of band). A plain and a streamed completion are verified in Node
// from the exact bytes the SDK exchanged.
import { test } from "node:test";
import assert from "node:assert/strict";
import { captureFetch, parseReceipt, verifyReceipt } from "../src/index.js";

const base = process.env.CUSTODY_URL;
const skip = base ? false : "CUSTODY_URL is not set (run go test ./clients/js)";

async function receiptOf(exchange, deadline = Date.now() + 10_000) {
  for (;;) {
    const res = await fetch(base + exchange.receiptPath, { headers: { authorization: `Bearer ${process.env.CUSTODY_KEY}` } });
    assert.equal(res.status, 200);
    const r = parseReceipt(await res.text());
    if (r.checkpoint !== "" || Date.now() > deadline) return r;
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

test("OpenAI SDK: plain and streamed responses verify in Node", { skip }, async () => {
  const { default: OpenAI } = await import("openai");
  const exchanges = [];
  const client = new OpenAI({
    apiKey: process.env.CUSTODY_KEY,
    baseURL: base + "/v1",
    fetch: captureFetch((x) => exchanges.push(x)),
    maxRetries: 0,
  });
  const plain = await client.chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "Hello from Node k9XbQ2mZ7w" }] });
  assert.match(plain.choices[0].message.content, /k9XbQ2mZ7w/);

  const stream = await client.chat.completions.create({ model: "sim-1", stream: true, messages: [{ role: "user", content: "Stream from Node" }] });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  assert.ok(text.length > 0);

  assert.equal(exchanges.length, 2);
  for (const x of exchanges) {
    assert.ok(x.requestId, "Custody-Request-Id");
    assert.equal(x.receiptPath, "/v1/custody/receipts/" + x.requestId);
    const response = await x.response;
    const r = await receiptOf(x);
    const ok = await verifyReceipt(r, { logKey: process.env.CUSTODY_VKEY, request: x.request, response });
    assert.equal(ok.status, "valid", `receipt ${x.requestId}`);
    assert.equal(ok.transaction.id, x.requestId);
    assert.equal(ok.transaction.verdict, "verified");
    // One byte off, either way, and it is refused.
    const edited = response.slice();
    edited[10] ^= 1;
    await assert.rejects(verifyReceipt(r, { logKey: process.env.CUSTODY_VKEY, request: x.request, response: edited }), /do not open the response commitment/);
    await assert.rejects(verifyReceipt(r, { logKey: process.env.CUSTODY_VKEY, request: new TextEncoder().encode("{}"), response }), /do not open the request commitment/);
  }
  const streamed = new TextDecoder().decode(await exchanges[1].response);
  assert.match(streamed, /: custody-receipt /, "the stream carries its receipt comment, which the commitment excludes");
});
