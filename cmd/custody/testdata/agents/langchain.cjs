// @langchain/openai, unchanged, against `custody serve` on its defaults
// (TestAgentsLangChain): invoke, stream and a bound tool, on chat and on
// the Responses API (useResponsesApi). The Go test reads every
// transaction's verdict from custody's log and receipts.
const assert = require('node:assert/strict');

async function main() {
  const { ChatOpenAI } = require('@langchain/openai');
  const { z } = require('zod');
  for (const useResponsesApi of [false, true]) {
    const llm = new ChatOpenAI({ model: 'sim-1', apiKey: 'anything', maxRetries: 0, useResponsesApi,
      configuration: { baseURL: process.env.BASE_URL + '/v1' } });
    const said = await llm.invoke('Say hello.');
    assert.ok(String(said.content).length > 0 || said.content.length > 0);
    let text = '';
    for await (const c of await llm.stream('Say hello.')) text += typeof c.content === 'string' ? c.content : c.text;
    assert.ok(text.length > 0);
    const withTool = llm.bindTools([{ name: 'get_weather', description: 'Current weather for a city.',
      schema: z.object({ city: z.string() }) }]);
    const call = await withTool.invoke('Use the get_weather tool for Paris.');
    assert.equal(call.tool_calls[0]?.name, 'get_weather', JSON.stringify(call));
  }
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
