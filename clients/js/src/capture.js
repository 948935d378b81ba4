// A fetch wrapper that hands the application the exact bytes an SDK sent
// to custody and received back, streams included, with the receipt id:
// what verifyReceipt needs to open a receipt's commitments. It works with
// any client that takes a `fetch` option (the OpenAI and Anthropic Node
// SDKs do) and changes nothing the SDK sees.

/**
 * @typedef {object} Exchange
 * @property {string} url
 * @property {string} method
 * @property {number} status
 * @property {string|null} requestId   the Custody-Request-Id header (the receipt id)
 * @property {string|null} receiptPath the Custody-Receipt header (path of GET /v1/custody/receipts/{id})
 * @property {Uint8Array|null} request the exact request body bytes (null: no body, or one this wrapper cannot copy)
 * @property {Promise<Uint8Array>} response the exact response body bytes, resolved once the body has ended
 */

/**
 * captureFetch returns a fetch that calls `fetchImpl` (default: the global
 * fetch) and `onExchange(exchange)` for every request, as soon as the
 * response headers arrive; `exchange.response` resolves when the SDK has
 * read the whole body (for a stream: after its last event).
 *
 * @param {(exchange: Exchange) => void} onExchange
 * @param {typeof fetch} [fetchImpl]
 * @returns {typeof fetch}
 */
export function captureFetch(onExchange, fetchImpl = globalThis.fetch) {
  return async function capturingFetch(input, init = {}) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const request = await requestBytes(input, init);
    const res = await fetchImpl(input, init);
    let response;
    let body = res.body;
    if (body) {
      const [forApp, forUs] = body.tee();
      response = readAll(forUs);
      body = forApp;
    } else {
      response = Promise.resolve(new Uint8Array(0));
    }
    onExchange({
      url,
      method,
      status: res.status,
      requestId: res.headers.get("custody-request-id"),
      receiptPath: res.headers.get("custody-receipt"),
      request,
      response,
    });
    if (!res.body) return res;
    const out = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(out, "url", { value: res.url });
    return out;
  };
}

// requestBytes copies the body the SDK hands fetch: a string (JSON, as
// the SDKs send it) is its UTF-8 bytes, which is what goes on the wire.
async function requestBytes(input, init) {
  const b = init.body;
  if (b == null) {
    if (input instanceof Request && input.body) return new Uint8Array(await input.clone().arrayBuffer());
    return null;
  }
  if (typeof b === "string") return new TextEncoder().encode(b);
  if (b instanceof Uint8Array) return b.slice();
  if (b instanceof ArrayBuffer) return new Uint8Array(b.slice(0));
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  if (typeof Blob !== "undefined" && b instanceof Blob) return new Uint8Array(await b.arrayBuffer());
  if (b instanceof URLSearchParams) return new TextEncoder().encode(b.toString());
  // A stream or form data: the bytes are produced as they are sent and
  // cannot be copied without consuming them.
  return null;
}

async function readAll(stream) {
  const reader = stream.getReader();
  const chunks = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    n += value.length;
  }
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
