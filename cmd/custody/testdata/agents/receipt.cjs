// Shared by the agent scripts (TestAgents*): the verdict custody recorded
// for a request id, read from GET /v1/custody/receipts/{id} (the leaf
// the receipt carries), as any client can read it after a stream.
const assert = require('node:assert/strict');

async function recordedVerdict(id) {
  assert.ok(id, 'no Custody-Request-Id');
  const r = await fetch(`${process.env.BASE_URL}/v1/custody/receipts/${id}`);
  assert.equal(r.status, 200, `receipt ${id}: ${r.status}`);
  const receipt = await r.json();
  return JSON.parse(Buffer.from(receipt.leaf, 'base64').toString()).verdict;
}

// verified asserts that the request behind response headers h was
// verified: the header when it is final, else the receipt (a stream's
// header says pending; its verdict is in the trailer and the receipt).
async function verified(h, what) {
  const get = (k) => (typeof h.get === 'function' ? h.get(k) : h[k]);
  const v = get('custody-verdict');
  if (v && v !== 'pending') {
    assert.equal(v, 'verified', `${what}: ${get('custody-checks')}`);
    return;
  }
  assert.equal(await recordedVerdict(get('custody-request-id')), 'verified', what);
}

module.exports = { recordedVerdict, verified };
