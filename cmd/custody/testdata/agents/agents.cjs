// @openai/agents, unchanged, against `custody serve` on its defaults
// (TestAgentsOpenAIAgents), in its default Responses mode and in
// chat-completions mode (API=chat_completions): an agent with a function
// tool runs to its final output, streamed and not, and with reasoning
// asked for (its reasoning sent back in the loop). The Go test reads
// every transaction's verdict from custody's log and receipts.
const assert = require('node:assert/strict');

async function main() {
  const { Agent, run, tool, setDefaultOpenAIKey, setOpenAIAPI, setTracingDisabled } = require('@openai/agents');
  const { z } = require('zod');
  setTracingDisabled(true);
  setDefaultOpenAIKey('anything');
  if (process.env.API) setOpenAIAPI(process.env.API);
  let calls = 0;
  const weather = tool({ name: 'get_weather', description: 'Current weather for a city.',
    parameters: z.object({ city: z.string() }), execute: async ({ city }) => { calls++; return `sunny in ${city}`; } });
  const agent = new Agent({ name: 'weather', instructions: 'You answer weather questions.', model: 'sim-1', tools: [weather] });

  const result = await run(agent, 'Use the get_weather tool for Paris.');
  assert.equal(calls, 1);
  assert.ok(typeof result.finalOutput === 'string' && result.finalOutput.length > 0, String(result.finalOutput));

  const streamed = await run(agent, 'Use the get_weather tool for Rome.', { stream: true });
  for await (const _ of streamed) { /* drain */ }
  await streamed.completed;
  assert.equal(calls, 2);
  assert.ok(streamed.finalOutput.length > 0);

  // With reasoning asked for, the engine reasons: the answers carry it
  // (a reasoning item, or reasoning_content), and the tool loop sends it
  // back with the call on the next turn.
  const thinker = new Agent({ name: 'thinker', instructions: 'You answer weather questions.', model: 'sim-1',
    tools: [weather], modelSettings: { reasoning: { effort: 'low' } } });
  const thought = await run(thinker, 'Use the get_weather tool for Oslo.');
  assert.equal(calls, 3);
  assert.ok(thought.finalOutput.length > 0);
  if (!process.env.API) {
    assert.ok(thought.newItems.some((i) => i.type === 'reasoning_item'), JSON.stringify(thought.newItems.map((i) => i.type)));
  }
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
