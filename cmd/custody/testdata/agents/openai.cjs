// openai (Node) 6 and 7, unchanged, against `custody serve` on its
// defaults (TestAgentsOpenAINode): chat with a tool, the Responses API
// plain and through its stream helpers (responses.stream().finalResponse(),
// which accumulates the events the way OpenAI sends them), each verdict
// read from the headers or the receipt. PKG names the package to load.
const assert = require('node:assert/strict');
const { verified } = require('./receipt.cjs');

async function main() {
  const OpenAI = require(process.env.PKG).default;
  const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: 'anything', maxRetries: 0 });
  const model = 'sim-1';
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: {
    type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

  const { data: chat, response } = await client.chat.completions
    .create({ model, messages: [{ role: 'user', content: 'Use the get_weather tool for Paris.' }], tools }).withResponse();
  await verified(response.headers, 'chat');
  const call = chat.choices[0].message.tool_calls?.[0];
  assert.ok(call, JSON.stringify(chat.choices[0]));
  // A tool call's arguments sent back as an object, as some agents do.
  const back = await client.chat.completions.create({ model, tools, messages: [
    { role: 'user', content: 'Use the get_weather tool for Paris.' },
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', tool_call_id: call.id, content: 'sunny' }] }).withResponse();
  await verified(back.response.headers, 'chat tool result');

  const rs = client.responses.stream({ model, input: 'Say hello.', max_output_tokens: 24 });
  const final = await rs.finalResponse();
  assert.ok(final.output_text.length > 0, JSON.stringify(final.output));
  const head = (await rs.withResponse?.())?.response?.headers;
  if (head) await verified(head, 'responses.stream');

  // A stream's verdict, as docs/guide.md tells: the request id from the
  // headers withResponse() gives, the verdict from its receipt.
  const { data: events, response: sh } = await client.responses.create({ model, input: 'Say hello.', max_output_tokens: 24, stream: true }).withResponse();
  let completed = false;
  for await (const ev of events) completed = completed || ev.type === 'response.completed';
  assert.ok(completed, 'no response.completed');
  assert.equal(sh.headers.get('custody-verdict'), 'pending');
  await verified(sh.headers, 'responses.create stream');

  const fr = client.responses.stream({ model, input: 'Use the get_weather tool for Paris.', tools: [
    { type: 'function', name: 'get_weather', strict: false, parameters: tools[0].function.parameters }] });
  const withCall = await fr.finalResponse();
  const fc = withCall.output.find((o) => o.type === 'function_call');
  assert.ok(fc, JSON.stringify(withCall.output));
  assert.equal(typeof JSON.parse(fc.arguments).city, 'string');

  const { data: plain, response: ph } = await client.responses.create({ model, input: 'Say hello.',
    include: [], store: false, service_tier: 'auto', prompt_cache_key: 'k1', safety_identifier: 'u1',
    truncation: 'auto', max_tool_calls: 4, text: { verbosity: 'medium' } }).withResponse();
  await verified(ph.headers, 'responses.create');
  assert.ok(plain.output_text.length > 0);

  // reasoning.effort: the engine's reasoning as a reasoning item, which
  // the stream helpers accumulate, sent back in the next turn's input (last:
  // a later request with the answer it quotes in its prompt would be one
  // another request's text came back in).
  const think = client.responses.stream({ model, input: 'Think, then greet me.', max_output_tokens: 24, reasoning: { effort: 'low' } });
  const thought = await think.finalResponse();
  const ri = thought.output.find((o) => o.type === 'reasoning');
  assert.ok(ri && ri.content[0].type === 'reasoning_text' && ri.content[0].text.length > 0, JSON.stringify(thought.output));
  const { response: nh } = await client.responses.create({ model, max_output_tokens: 24, reasoning: { effort: 'low' },
    input: [{ role: 'user', content: 'Think, then greet me.' }, ...thought.output, { role: 'user', content: 'Again.' }] }).withResponse();
  await verified(nh.headers, 'responses reasoning sent back');
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
