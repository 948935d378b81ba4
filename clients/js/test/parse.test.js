// Untrusted input never throws anything but a VerificationError.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseReceipt, parseBundle, parseReceiptOrBundle, VerificationError } from "../src/index.js";

test("malformed input is a VerificationError", () => {
  for (const input of ["", "{", "null", "[]", '{"v":1,"index":1.5}', '{"v":1,"leaf":7}', '{"v":2}', '{"format":"custody.bundle/v1","proof":3}',
    '{"format":"custody.bundle/v1","proof":"c2sp.org/tlog-proof@v1\\nindex 01\\n\\nx"}', '{"v":1,"inclusion_proof":"x"}']) {
    for (const parse of [parseReceipt, parseBundle, parseReceiptOrBundle]) {
      assert.throws(() => parse(input), VerificationError, `${parse.name}(${input})`);
    }
  }
});
