// One streamed request through custody with an official SDK, reading the
// stream as the SDK does while keeping the exact bytes custody sent
// (TestCanonicalRelayNodeSDKs). DIALECT is openai or anthropic; SCENARIO
// is put in the prompt for the tampering upstream to act on. Prints one
// JSON line: what the SDK read, or the error it raised, and the bytes.
const OpenAI = require('openai').default;
const Anthropic = require('@anthropic-ai/sdk').default;

const captured = [];
async function teeFetch(url, init) {
  const res = await fetch(url, init);
  const cap = { id: res.headers.get('custody-request-id'), status: res.status, chunks: [] };
  captured.push(cap);
  if (!res.body) return res;
  const [a, b] = res.body.tee();
  cap.done = (async () => {
    const r = b.getReader();
    for (;;) {
      const { value, done } = await r.read();
      if (done) break;
      cap.chunks.push(Buffer.from(value));
    }
  })();
  return new Response(a, { status: res.status, statusText: res.statusText, headers: res.headers });
}

async function main() {
  const prompt = `Tell me about the harbour. scenario:${process.env.SCENARIO}`;
  const out = { text: '', models: [], error: '' };
  try {
    if (process.env.DIALECT === 'openai') {
      const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: 'sk-acme', maxRetries: 0, fetch: teeFetch });
      const stream = await client.chat.completions.create({ model: process.env.MODEL, stream: true, max_tokens: 12,
        messages: [{ role: 'user', content: prompt }] });
      for await (const chunk of stream) {
        if (!out.models.includes(chunk.model)) out.models.push(chunk.model);
        for (const c of chunk.choices || []) out.text += (c.delta && c.delta.content) || '';
      }
    } else {
      const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: 'sk-acme', maxRetries: 0, fetch: teeFetch });
      const stream = await client.messages.create({ model: process.env.MODEL, stream: true, max_tokens: 12,
        messages: [{ role: 'user', content: prompt }] });
      for await (const ev of stream) {
        if (ev.type === 'message_start' && !out.models.includes(ev.message.model)) out.models.push(ev.message.model);
        if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') out.text += ev.delta.text;
      }
    }
  } catch (e) {
    out.error = String((e && e.message) || e) || 'error';
  }
  const cap = captured[captured.length - 1];
  // The SDK aborts the request once it raises: the copy holds what had
  // arrived by then. The timer only keeps node alive while it settles.
  if (cap && cap.done) await Promise.race([cap.done.catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
  out.id = cap ? cap.id : '';
  out.status = cap ? cap.status : 0;
  out.raw = cap ? Buffer.concat(cap.chunks).toString('base64') : '';
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
