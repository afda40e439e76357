#!/usr/bin/env node
// Upstream MCP server for the mcp-bridge interop tests on the real TypeScript SDK v2
// (npm @modelcontextprotocol/server 2.4.0 + @modelcontextprotocol/node 2.1.2, protocol
// revision 2026-07-28), over its own Streamable HTTP handler:
//
//   node upstream_ts2.mjs http PORT      (serves http://127.0.0.1:PORT/mcp)
//
// The same tools, resources and prompt as upstream.py, with the values client.mjs checks
// EXACTLY (adapted from the project's peers/ts2-upstream.mjs); change them together.
import { createServer } from 'node:http';
import { McpServer, ResourceTemplate, createMcpHandler, inputRequired, acceptedContent, completable } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod/v4';

const [mode, portArg] = process.argv.slice(2);
if (mode !== 'http' || !portArg) {
    console.error('usage: node upstream_ts2.mjs http PORT');
    process.exit(2);
}
const port = Number(portArg);

let counter = 0;
let farewellEnabled = false;
let publishToolsChanged = () => {};
let publishUpdated = () => {};

function buildServer() {
    const server = new McpServer(
        { name: 'interop-upstream', version: '1.0.0' },
        {
            capabilities: {
                tools: { listChanged: true },
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: true },
                logging: {},
                completions: {}
            },
            instructions: 'mcp-bridge interop test upstream (TypeScript SDK v2 2.4.0)'
        }
    );
    const text = t => ({ content: [{ type: 'text', text: t }] });

    server.registerTool('echo', {
        description: 'Echo the message',
        inputSchema: z.object({ message: z.string() }),
        outputSchema: z.object({ result: z.string() })
    }, async ({ message }) => ({ ...text(`Echo: ${message}`), structuredContent: { result: `Echo: ${message}` } }));

    server.registerTool('add', {
        description: 'Add two numbers',
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        outputSchema: z.object({ result: z.number() })
    }, async ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { result: a + b } }));

    const NAME = { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] };
    server.registerTool('ask_name', { description: 'Asks the user for a name (elicitation)' }, async ctx => {
        const resp = ctx.mcpReq.inputResponses?.['name'];
        if (!resp) {
            return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: NAME }) } });
        }
        const c = acceptedContent(ctx.mcpReq.inputResponses, 'name');
        return text(c ? `Hello, ${c.name}!` : `elicitation ${resp.action}`);
    });

    server.registerTool('ask_llm', { description: 'Asks the host LLM (sampling)', inputSchema: z.object({ prompt: z.string() }) },
        async ({ prompt }, ctx) => {
            const resp = ctx.mcpReq.inputResponses?.['llm'];
            if (!resp) {
                const messages = [{ role: 'user', content: { type: 'text', text: prompt } }];
                return inputRequired({ inputRequests: { llm: inputRequired.createMessage({ messages, maxTokens: 100 }) } });
            }
            return text(`LLM said: ${resp.content?.text ?? JSON.stringify(resp.content)}`);
        });

    server.registerTool('plan_trip', { description: 'Two elicitation rounds; round 2 carries requestState' }, async ctx => {
        const DEST = { type: 'object', properties: { destination: { type: 'string' } }, required: ['destination'] };
        const NIGHTS = { type: 'object', properties: { nights: { type: 'integer' } }, required: ['nights'] };
        const dest = ctx.mcpReq.requestState() ?? acceptedContent(ctx.mcpReq.inputResponses, 'dest')?.destination;
        if (!dest) return inputRequired({ inputRequests: { dest: inputRequired.elicit({ message: 'Where to?', requestedSchema: DEST }) } });
        const n = acceptedContent(ctx.mcpReq.inputResponses, 'nights');
        if (!n) {
            return inputRequired({
                requestState: dest,
                inputRequests: { nights: inputRequired.elicit({ message: `How many nights in ${dest}?`, requestedSchema: NIGHTS }) }
            });
        }
        return text(`trip: ${dest}, ${n.nights} nights`);
    });

    server.registerTool('countdown', {
        description: 'Counts down from n, emitting progress and log notifications',
        inputSchema: z.object({ n: z.number().int().min(1).max(50).default(3) })
    }, async ({ n }, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        for (let i = 1; i <= n; i++) {
            if (token !== undefined) {
                await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
            }
            await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', logger: 'countdown', data: `step ${i}/${n}` } });
        }
        return text(`completed ${n}/${n}`);
    });

    const farewell = server.registerTool('farewell', { description: 'Says goodbye (toggled by flip_tools)', inputSchema: z.object({ name: z.string() }) },
        async ({ name }) => text(`goodbye, ${name}`));
    if (!farewellEnabled) farewell.disable();
    server.registerTool('flip_tools', { description: 'Toggle the farewell tool; emits tools/list_changed' }, async () => {
        farewellEnabled = !farewellEnabled;
        farewell.update({ enabled: farewellEnabled });
        publishToolsChanged();
        return text(`farewell ${farewellEnabled ? 'enabled' : 'disabled'}`);
    });

    server.registerTool('increment', { description: 'Bump counter://value; emits resources/updated' }, async () => {
        counter++;
        publishUpdated('counter://value');
        return text(String(counter));
    });

    server.registerResource('app-config', 'config://app', { mimeType: 'application/json', description: 'Static config' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: '{"feature":true}' }] }));
    server.registerResource('counter', 'counter://value', { mimeType: 'text/plain', description: 'Bumped by increment' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: String(counter) }] }));
    server.registerResource('greeting', new ResourceTemplate('greeting://{name}', { list: undefined }), { description: 'Greeting' },
        async (uri, vars) => ({ contents: [{ uri: uri.href, text: `Hello, ${vars.name}!` }] }));

    const LANGS = ['python', 'typescript', 'rust', 'go'];
    server.registerPrompt('review-code', {
        description: 'Review code',
        argsSchema: z.object({
            language: completable(z.string().describe('Language'), v => LANGS.filter(l => l.startsWith(v))),
            code: z.string().describe('Code')
        })
    }, async ({ language, code }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Review this ${language}:\n${code}` } }] }));

    return server;
}

const handler = createMcpHandler(buildServer);
publishToolsChanged = () => handler.notify.toolsChanged();
publishUpdated = uri => handler.notify.resourceUpdated(uri);
const node = toNodeHandler(handler);
createServer((req, res) => {
    if (!req.url.startsWith('/mcp')) { res.writeHead(404).end(); return; }
    node(req, res);
}).listen(port, '127.0.0.1', () => console.error(`[upstream_ts2] listening on http://127.0.0.1:${port}/mcp`));
