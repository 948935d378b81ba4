// Verification of custody receipts and offline bundles, the twin of the Go
// package github.com/custody-gateway/custody/verify (offline part): the
// gateway's Ed25519 signature over the leaf, the commitments against the
// exact request/response bytes, the RFC 6962 inclusion proof under the
// signed checkpoint (C2SP signed-note, tlog-checkpoint), and a quorum of
// witness cosignatures (C2SP tlog-cosignature, cosignature/v1). No
// dependencies: WebCrypto (globalThis.crypto.subtle: Node 20+, browsers
// with Ed25519) does the hashing and signatures. docs/ledger.md in the
// repository is the format's contract; testdata/receipts/ holds the test
// vectors both verifiers must agree on.

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });
const subtle = globalThis.crypto.subtle;

const RECEIPT_DOMAIN = enc.encode("custody/receipt/v1\x00");
const BUNDLE_FORMAT = "custody.bundle/v1";
const TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1";
const RECEIPT_LINE = enc.encode(": custody-receipt ");
const MAX_PROOF = 64;
const MAX_LEAF = 64 << 10;

/** A receipt or bundle that does not verify. `code` is always "invalid". */
export class VerificationError extends Error {
  constructor(message) {
    super(message);
    this.name = "VerificationError";
    this.code = "invalid";
  }
}

function invalid(msg) {
  return new VerificationError(msg);
}

/** @param {string} s standard base64 */
export function fromBase64(s) {
  if (typeof s !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) {
    throw invalid("not standard base64");
  }
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toHex(b) {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function concat(...parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

async function sha256(...parts) {
  return new Uint8Array(await subtle.digest("SHA-256", concat(...parts)));
}

async function ed25519Verify(pub, sig, msg) {
  if (sig.length !== 64) return false;
  const key = await subtle.importKey("raw", pub, { name: "Ed25519" }, false, ["verify"]);
  return subtle.verify({ name: "Ed25519" }, key, sig, msg);
}

/** toBytes accepts a string (UTF-8), Uint8Array, ArrayBuffer or view. */
export function toBytes(x) {
  if (x == null) return null;
  if (typeof x === "string") return enc.encode(x);
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  throw new TypeError("bytes must be a string, Uint8Array or ArrayBuffer");
}

/**
 * A C2SP signed-note verifier key "name+hash+base64(alg || key)".
 * @param {string} vkey
 * @param {number} wantAlg 1 (Ed25519, the log) or 4 (cosignature/v1, a witness)
 */
export async function parseKey(vkey, wantAlg) {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(String(vkey).trim());
  if (!m) throw new TypeError(`malformed verifier key ${JSON.stringify(vkey)}`);
  const parts = m.slice(1);
  const [name, , b64] = parts;
  const raw = fromBase64(b64);
  if (raw.length !== 33) throw new TypeError(`verifier key ${name}: not an Ed25519 key`);
  const alg = raw[0];
  const pub = raw.slice(1);
  if (wantAlg === 1 && alg !== 1) throw new TypeError(`verifier key ${name}: algorithm ${alg}, want Ed25519 (1)`);
  if (wantAlg === 4 && alg !== 1 && alg !== 4) throw new TypeError(`witness key ${name}: algorithm ${alg}, want cosignature/v1 (4)`);
  // The key hash names the key in signature lines: SHA-256(name "\n" alg key)[:4].
  const algKey = concat(Uint8Array.of(wantAlg), pub);
  const h = await sha256(enc.encode(name + "\n"), algKey);
  const hash = ((h[0] << 24) | (h[1] << 16) | (h[2] << 8) | h[3]) >>> 0;
  if (wantAlg === 1 && hash !== parseInt(parts[1], 16)) throw new TypeError(`verifier key ${name}: key hash does not match the key`);
  return { name, hash, pub, alg: wantAlg };
}

function hex8(n) {
  return n.toString(16).padStart(8, "0");
}

/**
 * Parse a receipt (the JSON of GET /v1/custody/receipts/{id}) into its
 * fields, checking its shape only.
 * @param {string|object} json
 */
export function parseReceipt(json) {
  return malformed("receipt", () => parseReceiptFields(json));
}

// malformed turns any failure to read untrusted input (bad JSON, a number
// where a string belongs) into a VerificationError.
function malformed(what, f) {
  try {
    return f();
  } catch (e) {
    if (e instanceof VerificationError) throw e;
    throw invalid(`malformed ${what}: ${e.message}`);
  }
}

function parseReceiptFields(json) {
  const r = typeof json === "string" ? JSON.parse(json) : json;
  if (r === null || typeof r !== "object" || Array.isArray(r)) throw invalid("malformed receipt: not an object");
  if (r.index !== undefined && !Number.isSafeInteger(r.index)) throw invalid("malformed receipt: index");
  const known = new Set(["v", "request_id", "origin", "key_id", "index", "leaf", "request_salt", "response_salt", "signature", "checkpoint", "inclusion_proof", "cosigned", "rules", "rules_proof"]);
  for (const k of Object.keys(r)) if (!known.has(k)) throw invalid(`malformed receipt: unknown field ${k}`);
  if (r.v !== 1) throw invalid(`malformed receipt: version ${r.v}`);
  const out = {
    requestId: str(r.request_id),
    origin: str(r.origin),
    keyId: str(r.key_id),
    index: BigInt(r.index ?? 0),
    leaf: fromBase64(r.leaf ?? ""),
    requestSalt: fromBase64(r.request_salt ?? ""),
    responseSalt: fromBase64(r.response_salt ?? ""),
    signature: fromBase64(r.signature ?? ""),
    checkpoint: r.checkpoint ?? "",
    inclusionProof: (r.inclusion_proof ?? []).map((h) => fromBase64(h)),
    rules: fromBase64(r.rules ?? ""),
    rulesProof: (r.rules_proof ?? []).map((h) => fromBase64(h)),
  };
  return checkShape(out, "receipt");
}

function str(x) {
  if (x === undefined) return "";
  if (typeof x !== "string") throw invalid("malformed receipt: a string field is not a string");
  return x;
}

function checkShape(r, what) {
  if (r.leaf.length === 0 || r.leaf.length > MAX_LEAF) throw invalid(`malformed ${what}: leaf of ${r.leaf.length} bytes`);
  if (r.requestSalt.length !== 32 || r.responseSalt.length !== 32) throw invalid(`malformed ${what}: salts must be 32 bytes`);
  if (r.signature.length !== 64) throw invalid(`malformed ${what}: signature must be 64 bytes`);
  if (r.inclusionProof.length > MAX_PROOF) throw invalid(`malformed ${what}: inclusion proof too long`);
  if (r.inclusionProof.some((h) => h.length !== 32)) throw invalid(`malformed ${what}: inclusion proof hash is not 32 bytes`);
  if (r.checkpoint === "" && r.inclusionProof.length > 0) throw invalid(`malformed ${what}: inclusion proof without checkpoint`);
  if (r.rules.length > MAX_LEAF || r.rulesProof.length > MAX_PROOF || r.rulesProof.some((h) => h.length !== 32)) throw invalid(`malformed ${what}: rules`);
  if (r.checkpoint === "" && (r.rules.length > 0 || r.rulesProof.length > 0)) throw invalid(`malformed ${what}: rules without checkpoint`);
  if (!/^.+\+[0-9a-f]{8}$/.test(r.keyId)) throw invalid(`malformed ${what}: key_id ${JSON.stringify(r.keyId)}`);
  return r;
}

/**
 * Parse an offline bundle (custody.bundle/v1, whose proof is a C2SP
 * tlog-proof) into the receipt it stands for.
 * @param {string|object} json
 */
export function parseBundle(json) {
  return malformed("bundle", () => parseBundleFields(json));
}

function parseBundleFields(json) {
  const b = typeof json === "string" ? JSON.parse(json) : json;
  if (b === null || typeof b !== "object" || Array.isArray(b)) throw invalid("malformed bundle: not an object");
  const known = new Set(["format", "request_id", "origin", "key_id", "leaf", "request_salt", "response_salt", "signature", "proof", "rules", "rules_proof"]);
  for (const k of Object.keys(b)) if (!known.has(k)) throw invalid(`malformed bundle: unknown field ${k}`);
  if (b.format !== BUNDLE_FORMAT) throw invalid(`malformed bundle: format ${JSON.stringify(b.format)}`);
  const { index, proof, checkpoint } = parseTlogProof(str(b.proof));
  return checkShape(
    {
      requestId: str(b.request_id),
      origin: str(b.origin),
      keyId: str(b.key_id),
      index,
      leaf: fromBase64(b.leaf ?? ""),
      requestSalt: fromBase64(b.request_salt ?? ""),
      responseSalt: fromBase64(b.response_salt ?? ""),
      signature: fromBase64(b.signature ?? ""),
      checkpoint,
      inclusionProof: proof,
      rules: fromBase64(b.rules ?? ""),
      rulesProof: (b.rules_proof ?? []).map((h) => fromBase64(h)),
    },
    "bundle",
  );
}

/** Parse either: a bundle has "format". */
export function parseReceiptOrBundle(json) {
  const o = malformed("receipt", () => (typeof json === "string" ? JSON.parse(json) : json));
  return o !== null && typeof o === "object" && "format" in o ? parseBundle(o) : parseReceipt(o);
}

function parseTlogProof(s) {
  if (!s.startsWith(TLOG_PROOF_HEADER + "\n")) throw invalid("malformed bundle: proof is not a " + TLOG_PROOF_HEADER);
  let rest = s.slice(TLOG_PROOF_HEADER.length + 1);
  const line = () => {
    const i = rest.indexOf("\n");
    if (i < 0) return null;
    const l = rest.slice(0, i);
    rest = rest.slice(i + 1);
    return l;
  };
  let l = line();
  if (l !== null && l.startsWith("extra ")) {
    fromBase64(l.slice(6)); // unauthenticated: checked for shape, ignored
    l = line();
  }
  if (l === null || !/^index (0|[1-9][0-9]*)$/.test(l)) throw invalid("malformed bundle: proof has no index line");
  const index = BigInt(l.slice(6));
  const proof = [];
  for (;;) {
    l = line();
    if (l === null) throw invalid("malformed bundle: proof has no checkpoint");
    if (l === "") break;
    if (proof.length === MAX_PROOF) throw invalid("malformed bundle: inclusion proof too long");
    const h = fromBase64(l);
    if (h.length !== 32) throw invalid("malformed bundle: inclusion proof line is not a SHA-256 hash");
    proof.push(h);
  }
  if (rest === "") throw invalid("malformed bundle: proof has no checkpoint");
  return { index, proof, checkpoint: rest };
}

/** The bytes a stream's response commitment covers: up to the line ": custody-receipt <id>". */
export function stripReceiptLine(body) {
  const b = toBytes(body);
  outer: for (let i = 0; i + RECEIPT_LINE.length <= b.length; i++) {
    if (i > 0 && b[i - 1] !== 0x0a) continue;
    for (let j = 0; j < RECEIPT_LINE.length; j++) if (b[i + j] !== RECEIPT_LINE[j]) continue outer;
    return b.subarray(0, i);
  }
  return b;
}

// parseNote splits a C2SP signed note into its text and signature lines.
function parseNote(note) {
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) throw invalid("checkpoint: malformed note");
  const text = note.slice(0, split + 1);
  const sigs = note.slice(split + 2, -1).split("\n");
  if (sigs.length === 0 || sigs.length > 100) throw invalid("checkpoint: malformed note");
  return {
    text,
    sigs: sigs.map((l) => {
      if (!l.startsWith("\u2014 ")) throw invalid("checkpoint: malformed signature line");
      const sp = l.indexOf(" ", 2);
      if (sp < 0) throw invalid("checkpoint: malformed signature line");
      const raw = fromBase64(l.slice(sp + 1));
      if (raw.length < 5) throw invalid("checkpoint: malformed signature line");
      const hash = ((raw[0] << 24) | (raw[1] << 16) | (raw[2] << 8) | raw[3]) >>> 0;
      return { name: l.slice(2, sp), hash, sig: raw.subarray(4) };
    }),
  };
}

async function cosignatureValid(w, text, sig) {
  if (sig.length !== 8 + 64) return false;
  let t = 0n;
  for (let i = 0; i < 8; i++) t = (t << 8n) | BigInt(sig[i]);
  const msg = enc.encode(`cosignature/v1\ntime ${t}\n${text}`);
  return ed25519Verify(w.pub, sig.subarray(8), msg);
}

// openCheckpoint verifies the log's signature (and, with witnesses, every
// signature line by a pinned witness: one that does not verify is a
// forgery) and returns the tree and the cosigners' names.
async function openCheckpoint(cp, logKey, witnesses) {
  const { text, sigs } = parseNote(cp);
  let logSigned = false;
  const cosigners = [];
  const seen = new Set();
  for (const s of sigs) {
    if (s.name === logKey.name && s.hash === logKey.hash) {
      if (!(await ed25519Verify(logKey.pub, s.sig, enc.encode(text)))) throw invalid(`checkpoint: invalid signature for key ${logKey.name}+${hex8(logKey.hash)}`);
      logSigned = true;
      continue;
    }
    const w = witnesses.find((k) => k.name === s.name && k.hash === s.hash);
    if (!w) continue;
    if (!(await cosignatureValid(w, text, s.sig))) throw invalid(`checkpoint: forged signature by ${w.name}+${hex8(w.hash)}`);
    if (!seen.has(w.name + w.hash)) {
      seen.add(w.name + w.hash);
      cosigners.push(w.name);
    }
  }
  if (!logSigned) throw invalid("checkpoint: not signed by the pinned log key");
  const lines = text.split("\n");
  if (lines.length < 4 || lines[0] !== logKey.name || !/^(0|[1-9][0-9]*)$/.test(lines[1])) throw invalid("checkpoint: malformed body");
  const root = fromBase64(lines[2]);
  if (root.length !== 32) throw invalid("checkpoint: malformed root");
  return { size: BigInt(lines[1]), root, cosigners };
}

async function hashChildren(l, r) {
  return sha256(Uint8Array.of(1), l, r);
}

// rootFromInclusion is RFC 9162 section 2.1.3.2.
async function rootFromInclusion(index, size, leafHash, proof) {
  if (index >= size) throw invalid("inclusion proof: index beyond the tree");
  let fn = index;
  let sn = size - 1n;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0n) throw invalid("inclusion proof: too long");
    if ((fn & 1n) === 1n || fn === sn) {
      r = await hashChildren(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await hashChildren(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw invalid("inclusion proof: too short");
  return r;
}

/**
 * Verify a receipt or bundle offline with pinned keys.
 *
 * Resolves to {status: "valid", cosigners, transaction, rules} (rules: the
 * config leaf the transaction was decided under, when the receipt carries
 * it, proven under its checkpoint) when everything
 * checks, {status: "not_integrated", transaction} when the signature and
 * commitments are valid but the receipt has no checkpoint yet (the CLI's
 * exit 3); rejects with a VerificationError otherwise.
 *
 * @param {object} receipt from parseReceipt / parseBundle / parseReceiptOrBundle
 * @param {object} opts
 * @param {string} opts.logKey the log's pinned verifier key (GET /log/verifier, pinned)
 * @param {string[]} [opts.witnessKeys] pinned witness cosignature keys
 * @param {number} [opts.witnessQuorum] how many of them must have cosigned (default: all; 0 with no keys: none)
 * @param {Uint8Array|string} [opts.request] the exact request bytes
 * @param {Uint8Array|string} [opts.response] the exact response bytes (a stream's receipt line and after are ignored)
 */
export async function verifyReceipt(receipt, opts) {
  const logKey = await parseKey(opts.logKey, 1);
  const witnesses = [];
  for (const k of opts.witnessKeys ?? []) witnesses.push(await parseKey(k, 4));
  const quorum = opts.witnessQuorum ?? witnesses.length;
  if (quorum < 0 || quorum > witnesses.length) throw new TypeError(`witnessQuorum ${quorum}: want 0 to ${witnesses.length}`);
  const r = receipt;
  if (r.origin !== logKey.name) throw invalid(`receipt is for log ${JSON.stringify(r.origin)}, the key is for ${JSON.stringify(logKey.name)}`);
  if (r.keyId !== `${logKey.name}+${hex8(logKey.hash)}`) throw invalid(`receipt names key ${r.keyId}, the pinned key is ${logKey.name}+${hex8(logKey.hash)}`);
  if (!(await ed25519Verify(logKey.pub, r.signature, concat(RECEIPT_DOMAIN, r.leaf)))) throw invalid("bad signature on the leaf");
  let tx;
  try {
    tx = JSON.parse(dec.decode(r.leaf));
  } catch {
    throw invalid("leaf: not JSON");
  }
  // Version 2 adds config_leaf (the index of the rules in force); version 1 has none. Version 3
  // (custody's own traffic) adds sender, "canary" or "eval", with canary true, config_leaf when named.
  if (!knownLeafVersion(tx)) throw invalid("leaf: unknown version");
  if (tx.id !== r.requestId) throw invalid(`leaf is for request ${JSON.stringify(tx.id)}, receipt for ${JSON.stringify(r.requestId)}`);
  const request = toBytes(opts.request);
  if (request) {
    if (!tx.request_commitment) throw invalid("the leaf commits to no request bytes");
    if (toHex(await sha256(r.requestSalt, request)) !== tx.request_commitment) throw invalid("the request bytes do not open the request commitment");
  }
  const response = toBytes(opts.response);
  if (response) {
    if (!tx.response_commitment) throw invalid("the leaf commits to no response bytes");
    if (toHex(await sha256(r.responseSalt, stripReceiptLine(response))) !== tx.response_commitment) throw invalid("the response bytes do not open the response commitment");
  }
  if (r.checkpoint === "") return { status: "not_integrated", transaction: tx, cosigners: [], rules: null };
  const cp = await openCheckpoint(r.checkpoint, logKey, quorum > 0 ? witnesses : []);
  if (r.index >= cp.size) throw invalid(`receipt checkpoint (size ${cp.size}) does not cover index ${r.index}`);
  const leafHash = await sha256(Uint8Array.of(0), r.leaf);
  const root = await rootFromInclusion(r.index, cp.size, leafHash, r.inclusionProof);
  if (!equal(root, cp.root)) throw invalid("receipt inclusion proof does not lead to the checkpoint's root");
  let rules = null;
  if (r.rules.length > 0) {
    if (!Number.isInteger(tx.config_leaf)) throw invalid("the receipt carries rules but its leaf names no config leaf");
    const rr = await rootFromInclusion(BigInt(tx.config_leaf), cp.size, await sha256(Uint8Array.of(0), r.rules), r.rulesProof);
    if (!equal(rr, cp.root)) throw invalid(`the receipt's rules are not config leaf ${tx.config_leaf} of its checkpoint`);
    try {
      rules = JSON.parse(dec.decode(r.rules));
    } catch {
      throw invalid("the receipt's rules: not JSON");
    }
    if (rules === null || rules.v !== 1 || rules.type !== "config") throw invalid("the receipt's rules: not a config leaf");
  }
  if (quorum > 0 && cp.cosigners.length < quorum) {
    throw invalid(`checkpoint cosigned by ${cp.cosigners.length} of the pinned witnesses (${cp.cosigners.join(", ")}), quorum ${quorum}: the witnesses have not seen this tree`);
  }
  return { status: "valid", transaction: tx, cosigners: quorum > 0 ? cp.cosigners : [], rules };
}

// knownLeafVersion: tx is a leaf of a version this verifier reads (docs/ledger.md).
function knownLeafVersion(tx) {
  if (tx === null || typeof tx !== "object") return false;
  switch (tx.v) {
    case 1:
      return tx.config_leaf === undefined && tx.sender === undefined;
    case 2:
      return Number.isInteger(tx.config_leaf) && tx.sender === undefined;
    case 3:
      return (tx.sender === "canary" || tx.sender === "eval") && tx.canary === true &&
        (tx.config_leaf === undefined || Number.isInteger(tx.config_leaf));
  }
  return false;
}
