// The Vercel AI SDK (ai, @ai-sdk/openai, @ai-sdk/anthropic), unchanged,
// against `custody serve` on its defaults (TestAgentsVercelAI): a tool
// loop on each provider (OpenAI Responses, OpenAI chat, Anthropic),
// generated and streamed, each verdict read from the response headers or
// the receipt.
const assert = require('node:assert/strict');
const { pathToFileURL } = require('node:url');
const { verified } = require('./receipt.cjs');

// ai is an ES module: imported by its resolved path, since NODE_PATH
// only serves require.
const load = (name) => import(pathToFileURL(require.resolve(name)).href);

async function main() {
  const { generateText, streamText, tool, stepCountIs } = await load('ai');
  const { createOpenAI } = await load('@ai-sdk/openai');
  const { createAnthropic } = await load('@ai-sdk/anthropic');
  const { z } = require('zod');
  const base = process.env.BASE_URL + '/v1';
  const openai = createOpenAI({ baseURL: base, apiKey: 'anything' });
  const anthropic = createAnthropic({ baseURL: base, apiKey: 'anything' });
  const models = { responses: openai('sim-1'), chat: openai.chat('sim-1'), anthropic: anthropic('sim-1') };
  for (const [name, model] of Object.entries(models)) {
    let calls = 0;
    const tools = { get_weather: tool({ description: 'Current weather for a city.', inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => { calls++; return `sunny in ${city}`; } }) };
    const r = await generateText({ model, tools, stopWhen: stepCountIs(3), maxRetries: 0,
      prompt: 'Use the get_weather tool for Paris.' });
    assert.equal(calls, 1, name);
    assert.ok(r.text.length > 0, `${name}: ${JSON.stringify(r.steps.map((s) => s.finishReason))}`);
    for (const step of r.steps) await verified(step.response.headers, `${name} step`);

    const s = streamText({ model, tools, stopWhen: stepCountIs(3), maxRetries: 0, prompt: 'Use the get_weather tool for Rome.' });
    let text = '';
    for await (const d of s.textStream) text += d;
    assert.ok(text.length > 0, name);
    assert.equal(calls, 2, name);
    for (const step of await s.steps) await verified(step.response.headers, `${name} streamed step`);
  }
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
