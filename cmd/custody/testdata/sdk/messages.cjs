// The official Anthropic TypeScript SDK against custody (TestMessagesNodeSDK).
// BASE_URL is custody's; MODELS the comma-separated models to drive.
const Anthropic = require('@anthropic-ai/sdk').default;
const assert = require('node:assert/strict');

async function main() {
  const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: 'sk-acme', maxRetries: 0 });
  const tools = [{ name: 'get_weather', description: 'Current weather for a city.',
    input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } }];
  for (const model of process.env.MODELS.split(',')) {
    const ask = [{ role: 'user', content: 'What is the weather in Paris today?' }];
    const { data: msg, response } = await client.messages
      .create({ model, max_tokens: 24, system: 'You are a weather bot.', messages: ask }).withResponse();
    assert.equal(response.headers.get('custody-verdict'), 'verified', `${model}: ${response.headers.get('custody-checks')}`);
    assert.ok(response.headers.get('custody-receipt'));
    assert.ok(msg.id.startsWith('msg_'), msg.id);
    assert.equal(msg.type, 'message');
    assert.ok(msg.content[0].text.length > 0);
    assert.ok(msg.usage.input_tokens > 0 && msg.usage.output_tokens > 0);

    const count = await client.messages.countTokens({ model, system: 'You are a weather bot.', messages: ask });
    assert.equal(count.input_tokens, msg.usage.input_tokens);

    const stream = client.messages.stream({ model, max_tokens: 24, messages: ask });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const final = await stream.finalMessage();
    assert.ok(text.length > 0);
    assert.equal(final.content[0].text, text);
    assert.ok(final.stop_reason);

    const call = await client.messages.create({ model, max_tokens: 24, messages: ask, tools,
      tool_choice: { type: 'tool', name: 'get_weather' } });
    assert.equal(call.stop_reason, 'tool_use');
    const use = call.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'get_weather');
    assert.equal(typeof use.input.city, 'string');
    const done = await client.messages.create({ model, max_tokens: 24, tools, messages: [...ask,
      { role: 'assistant', content: call.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"sky":"clear"}' }] }] });
    assert.equal(done.content[0].type, 'text');

    const ts = client.messages.stream({ model, max_tokens: 24, messages: ask, tools, tool_choice: { type: 'any' } });
    const tfinal = await ts.finalMessage();
    assert.equal(tfinal.content[0].type, 'tool_use');
    assert.equal(typeof tfinal.content[0].input.city, 'string');
  }
  await assert.rejects(
    client.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    (e) => e.status === 400 && /invalid_request/.test(e.message));
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
