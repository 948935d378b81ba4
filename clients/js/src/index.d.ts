/** A receipt or bundle that does not verify. */
export class VerificationError extends Error {
  readonly code: "invalid";
}

/** A receipt (or bundle) parsed into its fields; shape checked, nothing verified. */
export interface Receipt {
  requestId: string;
  origin: string;
  keyId: string;
  index: bigint;
  leaf: Uint8Array;
  requestSalt: Uint8Array;
  responseSalt: Uint8Array;
  signature: Uint8Array;
  /** The signed checkpoint note, with any witness cosignatures; "" until integrated. */
  checkpoint: string;
  inclusionProof: Uint8Array[];
  /** The config leaf the transaction leaf names, and its inclusion proof under checkpoint (empty if absent). */
  rules: Uint8Array;
  rulesProof: Uint8Array[];
}

/** A config leaf: the rules in force (docs/ledger.md "Config leaves"). */
export interface ConfigLeaf {
  v: 1;
  type: "config";
  time: string;
  reason: string;
  custody_version: string;
  config_digest: string;
  /** The policies in force, by name. */
  policies: Record<string, Record<string, unknown>>;
  previous_config_leaf: number;
}

/** The JSON of GET /v1/custody/receipts/{id}. */
export function parseReceipt(json: string | object): Receipt;
/** An offline bundle (format custody.bundle/v1, proof a C2SP tlog-proof). */
export function parseBundle(json: string | object): Receipt;
/** Either: a bundle has "format". */
export function parseReceiptOrBundle(json: string | object): Receipt;

export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | string;

export interface VerifyOptions {
  /** The log's pinned note verifier key ("origin+hash+base64"), from GET /log/verifier, pinned. */
  logKey: string;
  /** Pinned witness cosignature/v1 verifier keys. */
  witnessKeys?: string[];
  /** How many of witnessKeys must have cosigned the checkpoint; default all of them. */
  witnessQuorum?: number;
  /** The exact request body bytes, to open the request commitment. */
  request?: Bytes | null;
  /** The exact response body bytes; for a stream, from the first byte (the receipt comment and after are ignored). */
  response?: Bytes | null;
}

/** The leaf: one custody transaction, no plaintext (docs/ledger.md "The leaf"). */
export interface Transaction {
  v: number;
  id: string;
  tenant: string;
  time: string;
  policy: string;
  verdict: string;
  code: string;
  /** Version 2 (and 3, when named): the log index of the config leaf (the rules) in force. */
  config_leaf?: number;
  /** Version 3: custody's own traffic, "canary" (a canary probe) or "eval" (an evaluation suite); absent for a client's. */
  sender?: "canary" | "eval";
  request_commitment: string;
  response_commitment: string;
  [field: string]: unknown;
}

export interface VerifyResult {
  /** "not_integrated": signature and commitments valid, no checkpoint yet (custody verify's exit 3). */
  status: "valid" | "not_integrated";
  transaction: Transaction;
  /** Names of the pinned witnesses whose cosignatures verified (with a quorum). */
  cosigners: string[];
  /** The rules the transaction was decided under, when the receipt carries them; null otherwise. */
  rules: ConfigLeaf | null;
}

/** Verify offline with pinned keys; rejects with VerificationError. */
export function verifyReceipt(receipt: Receipt, opts: VerifyOptions): Promise<VerifyResult>;

/** The bytes a stream's response commitment covers: up to the ": custody-receipt <id>" line. */
export function stripReceiptLine(body: Bytes): Uint8Array;
export function parseKey(vkey: string, alg: 1 | 4): Promise<{ name: string; hash: number; pub: Uint8Array; alg: number }>;
export function fromBase64(s: string): Uint8Array;
export function toBytes(x: Bytes | null | undefined): Uint8Array | null;

export interface Exchange {
  url: string;
  method: string;
  status: number;
  /** Custody-Request-Id: the receipt id. */
  requestId: string | null;
  /** Custody-Receipt: the receipt's path on the gateway. */
  receiptPath: string | null;
  /** The exact request body bytes; null when there was none or it was a stream. */
  request: Uint8Array | null;
  /** The exact response body bytes, once the SDK has read the whole body. */
  response: Promise<Uint8Array>;
}

/** A fetch for the OpenAI / Anthropic SDKs' `fetch` option that reports every exchange's exact bytes. */
export function captureFetch(onExchange: (exchange: Exchange) => void, fetchImpl?: typeof fetch): typeof fetch;
