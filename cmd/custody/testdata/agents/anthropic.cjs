// @anthropic-ai/sdk, unchanged, against `custody serve` on its defaults
// (TestAgentsAnthropicNode): a stream read to finalMessage(), the
// members Claude Code sends (a mid-conversation system message,
// thinking, output_config.effort, context_management, service_tier,
// a failed tool's is_error, an empty text block), and
// beta.messages.toolRunner, which asks for a server-side thread.
const assert = require('node:assert/strict');
const { verified } = require('./receipt.cjs');

async function main() {
  const Anthropic = require('@anthropic-ai/sdk').default;
  const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: 'anything', maxRetries: 0 });
  const model = 'sim-1';

  const stream = client.messages.stream({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Say hello.' }] });
  const msg = await stream.finalMessage();
  assert.ok(msg.content[0].text.length > 0, JSON.stringify(msg));
  const { response } = await stream.withResponse();
  await verified(response.headers, 'messages.stream');

  // A thinking stream read to finalMessage(): the thinking_delta events
  // accumulate into the thinking block.
  const ts = client.messages.stream({ model, max_tokens: 32, thinking: { type: 'adaptive' },
    messages: [{ role: 'user', content: 'Say hello.' }] });
  const tm = await ts.finalMessage();
  assert.ok(tm.content[0].type === 'thinking' && tm.content[0].thinking.length > 0 && tm.content[0].signature === '',
    JSON.stringify(tm.content));
  await verified((await ts.withResponse()).response.headers, 'messages.stream thinking');

  const tools = [{ name: 'Read', description: 'Read a file.', input_schema: { type: 'object',
    properties: { file_path: { type: 'string' } }, required: ['file_path'] } }];
  const ask = [{ role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'Use the Read tool on notes.txt.' }] },
    { role: 'system', content: 'The working directory is /tmp.' }];
  const agentish = { model, max_tokens: 64, tools, thinking: { type: 'adaptive' }, output_config: { effort: 'high' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] }, service_tier: 'auto',
    metadata: { user_id: 'u-1' } };
  const first = await client.beta.messages.create({ ...agentish, messages: ask }).withResponse();
  await verified(first.response.headers, 'agent turn');
  // thinking: the engine's reasoning as a thinking block, its signature
  // "" (custody cannot sign as Anthropic does); sent back below.
  assert.ok(first.data.content.find((b) => b.type === 'thinking' && b.thinking.length > 0 && b.signature === ''),
    JSON.stringify(first.data.content));
  const use = first.data.content.find((b) => b.type === 'tool_use');
  assert.ok(use, JSON.stringify(first.data.content));
  const second = await client.beta.messages.create({ ...agentish, stream: true, messages: [...ask,
    { role: 'assistant', content: first.data.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, is_error: true, content: 'no such file' }] }] }).withResponse();
  let text = '';
  for await (const ev of second.data) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
  assert.ok(text.length > 0);
  await verified(second.response.headers, 'agent turn after a failed tool');

  const { betaTool } = require('@anthropic-ai/sdk/helpers/beta/json-schema');
  let ran = 0;
  const read = betaTool({ name: 'Read', description: 'Read a file.', inputSchema: { type: 'object',
    properties: { file_path: { type: 'string' } }, required: ['file_path'] }, run: async () => { ran++; return 'plum'; } });
  const runner = client.beta.messages.toolRunner({ model, max_tokens: 64, tools: [read],
    messages: [{ role: 'user', content: 'Use the Read tool on notes.txt.' }] });
  const last = await runner.runUntilDone();
  assert.equal(ran, 1);
  assert.ok(last.content.some((b) => b.type === 'text'), JSON.stringify(last));
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
