// @custody-gateway/verify: verify custody receipts and offline bundles in
// Node 20+ and browsers, and capture the exact bytes an SDK exchanged.
export {
  VerificationError,
  parseReceipt,
  parseBundle,
  parseReceiptOrBundle,
  verifyReceipt,
  stripReceiptLine,
  parseKey,
  fromBase64,
  toBytes,
} from "./verify.js";
export { captureFetch } from "./capture.js";
