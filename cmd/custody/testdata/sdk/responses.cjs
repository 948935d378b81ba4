// The official OpenAI TypeScript SDK's Responses API against custody
// (TestResponsesNodeSDK). BASE_URL is custody's; MODELS the models to drive.
const OpenAI = require('openai').default;
const assert = require('node:assert/strict');

async function main() {
  const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: 'sk-acme', maxRetries: 0 });
  const tools = [{ type: 'function', name: 'get_weather', description: 'Current weather for a city.', strict: false,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
  for (const model of process.env.MODELS.split(',')) {
    const question = 'What is the weather in Paris today?';
    const { data: r, response } = await client.responses
      .create({ model, instructions: 'You are a weather bot.', input: question, max_output_tokens: 24, store: false }).withResponse();
    assert.equal(response.headers.get('custody-verdict'), 'verified', `${model}: ${response.headers.get('custody-checks')}`);
    assert.ok(r.id.startsWith('resp_'), r.id);
    assert.ok(r.output_text.length > 0);
    assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0);

    const stream = await client.responses.create({ model, input: question, max_output_tokens: 24, stream: true });
    let text = '', last = -1, final = null;
    for await (const ev of stream) {
      assert.ok(ev.sequence_number > last, `sequence ${ev.sequence_number} after ${last}`);
      last = ev.sequence_number;
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed' || ev.type === 'response.incomplete') final = ev.response;
    }
    assert.ok(text.length > 0);
    assert.equal(final.output_text ?? final.output[0].content[0].text, text);

    const input = [{ role: 'user', content: question }];
    const call = await client.responses.create({ model, input, tools, max_output_tokens: 24,
      tool_choice: { type: 'function', name: 'get_weather' } });
    const fc = call.output.find((o) => o.type === 'function_call');
    assert.ok(fc, JSON.stringify(call.output));
    assert.equal(typeof JSON.parse(fc.arguments).city, 'string');
    const done = await client.responses.create({ model, tools, max_output_tokens: 24,
      input: [...input, fc, { type: 'function_call_output', call_id: fc.call_id, output: '{"sky":"clear"}' }] });
    assert.ok(done.output_text.length > 0);

    const fs = await client.responses.create({ model, input, tools, tool_choice: 'required', max_output_tokens: 24, stream: true });
    let args = '';
    for await (const ev of fs) {
      if (ev.type === 'response.function_call_arguments.done') args = ev.arguments;
    }
    assert.equal(typeof JSON.parse(args).city, 'string');
  }
  await assert.rejects(
    client.responses.create({ model: 'translated', input: 'and then?', previous_response_id: 'resp_earlier' }),
    (e) => e.status === 400 && e.param === 'previous_response_id' && e.code === 'invalid_request');
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
