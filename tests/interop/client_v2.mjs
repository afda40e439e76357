#!/usr/bin/env node
// A REAL 2026-07-28 client (TypeScript SDK v2, @modelcontextprotocol/client `Client` over its
// `StdioClientTransport`, version pinned to 2026-07-28: it connects with server/discover)
// against the embedded bridge's example (examples/embedded/main.rs, the modern path). Checks exact
// values of tools, prompts, resources, one input request (elicitation, answered "Ada", which
// the SDK fulfils and retries) and one list change on a `subscriptions/listen` stream. Prints
// one line: `ok embedded-ts2: ...` (exit 0) or `FAIL embedded-ts2: <step>: <why>` (exit 1).
//
//   node client_v2.mjs -- SERVER_CMD [ARGS...]
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { isDeepStrictEqual } from 'node:util';

const TIMEOUT_MS = 20000;
const argv = process.argv.slice(2);
const cmd = argv.indexOf('--') >= 0 ? argv.slice(argv.indexOf('--') + 1) : [];
if (cmd.length === 0) {
    console.error('usage: node client_v2.mjs -- SERVER_CMD [ARGS...]');
    process.exit(2);
}
let step = 'start';
function expectEqual(actual, expected, what) {
    if (!isDeepStrictEqual(actual, expected)) {
        throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    }
}
const texts = result => result.content.map(c => c.text);

async function run() {
    const client = new Client(
        { name: 'mcp-bridge-interop-v2', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } }
    );
    const asked = [];
    client.setRequestHandler('elicitation/create', async request => {
        asked.push(request.params.message);
        return { action: 'accept', content: { name: 'Ada' } };
    });
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => { changed++; });
    const transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: 'pipe' });
    step = 'connect (server/discover)';
    await client.connect(transport);
    expectEqual(client.getServerVersion()?.name, 'embedded-example', 'serverInfo.name');

    step = 'tools';
    const { tools } = await client.listTools();
    expectEqual(tools.map(t => t.name), ['echo', 'ask_name', 'add_tool'], 'tool names');
    expectEqual(texts(await client.callTool({ name: 'echo', arguments: { text: 'h\u00e9 \u2713' } })),
        ['h\u00e9 \u2713'], 'echo');
    step = 'prompts';
    const { prompts } = await client.listPrompts();
    expectEqual(prompts.map(p => p.name), ['greet'], 'prompt names');
    const pg = await client.getPrompt({ name: 'greet' });
    expectEqual(pg.messages, [{ role: 'user', content: { type: 'text', text: 'Say hi.' } }], 'greet');
    step = 'resources';
    const { resources } = await client.listResources();
    expectEqual(resources.map(r => r.uri), ['example://readme'], 'resource URIs');
    const rr = await client.readResource({ uri: 'example://readme' });
    expectEqual(rr.contents, [{ uri: 'example://readme', text: 'Hi.' }], 'readme');
    step = 'input request';
    expectEqual(texts(await client.callTool({ name: 'ask_name', arguments: {} })), ['Hi, Ada!'], 'ask_name');
    expectEqual(asked, ['Your name?'], 'elicitations');
    step = 'list change';
    const sub = await client.listen({ toolsListChanged: true });
    expectEqual(texts(await client.callTool({ name: 'add_tool', arguments: {} })), ['The tool list changed.'], 'add_tool');
    const t0 = Date.now();
    while (changed < 1 && Date.now() - t0 < TIMEOUT_MS) await new Promise(r => setTimeout(r, 20));
    expectEqual(changed, 1, 'tools list changes on the listen stream');
    await sub.close();
    await client.close();
    return 'server/discover (pinned 2026-07-28), echo, prompts/get greet, resources/read example://readme, ' +
        'ask_name with one elicitation, a tools list change on the listen stream';
}

const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS} ms`)), TIMEOUT_MS));
try {
    const what = await Promise.race([run(), deadline]);
    console.log(`ok embedded-ts2: ${what}`);
    process.exit(0);
} catch (e) {
    console.log(`FAIL embedded-ts2: ${step}: ${e?.message ?? e}`);
    process.exit(1);
}
