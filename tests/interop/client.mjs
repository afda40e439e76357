#!/usr/bin/env node
// Interop client for mcp-bridge: a REAL MCP 2025-11-25 client (TypeScript SDK 1.x,
// @modelcontextprotocol/sdk `Client` over `StdioClientTransport`), the way an editor
// talks to the bridge. It spawns the server command given after `--`, runs ONE
// scenario, checks exact values, and prints exactly one line on stdout:
//
//   ok <scenario>: <what was checked>        (exit 0)
//   FAIL <scenario>: <step>: <why>            (exit 1; child stderr tail and, with
//                                              tracing, the wire go to stderr)
//
// Usage:
//   node client.mjs [--trace] SCENARIO -- CMD [ARGS...]
//   e.g. node client.mjs basic -- target/debug/mcp-bridge -- .venv/bin/python upstream.py
//
// Scenarios (the expected values come from upstream.py):
//   basic         initialize (2025-11-25, serverInfo.name), tools/list, tools/call echo + add,
//                 resources/list + read config://app, prompts/list + get review-code
//   elicit        declares elicitation {form: {}}; tools/call ask_name; the server must send
//                 elicitation/create, answered "accept" {name: "Ada"}; result "Hello, Ada!"
//   list-changed  tools/call flip_tools twice; each call must be followed by
//                 notifications/tools/list_changed and a tools/list with/without `farewell`
//   subscribe     resources/subscribe counter://value; tools/call increment must be followed by
//                 notifications/resources/updated for it; after resources/unsubscribe, none
//   elicit-2rounds  tools/call plan_trip: two chained elicitation/create ("Where to?" -> Lisbon,
//                 "How many nights in Lisbon?" -> 3); result "trip: Lisbon, 3 nights"
//   sampling      declares sampling; tools/call ask_llm: one sampling/createMessage (exact
//                 messages, maxTokens 100) answered with a canned text; "LLM said: canned answer"
//   legacy-everything  the upstream is server-everything 2026.8.31 (2025-11-25 only: the bridge
//                 falls back to pass-through): its own initialize result (serverInfo
//                 mcp-servers/everything 2.0.0, tasks capability), the tools/list_changed it
//                 sends after initialized, roots/list asked of the client, tools/call echo,
//                 trigger-sampling-request (sampling/createMessage exact), trigger-elicitation-
//                 request (accept {name: "Ada"}), get-roots-list, progress of
//                 trigger-long-running-operation and its cancel (AbortSignal -> the SDK's
//                 notifications/cancelled), gzip-file-as-resource -> resources/list_changed and
//                 the new resource in resources/list
//   gateway       `mcp-bridge --config FILE` (run.sh writes FILE with gateway_config.py):
//                 upstream.py as `py`, server-everything as `everything`, mcp-example-server as
//                 `example`, and the sign-in fixture's protected endpoint as `signed` (an OAuth
//                 sign-in through run.sh's $BROWSER script); the exact tools, prompts, resources
//                 and templates of the four under their exposed names, a call of each, a read, a
//                 prompt and completions of the first three, subscriptions, elicitation, sampling
//                 and roots through the one bridge, logging, progress and a server's error
//                 (README.md lists every check)
//   embedded      the embedded bridge's example (run.sh starts examples/embedded itself, no
//                 bridge process): tools, prompts, resources, one elicitation, and a list
//                 change that arrives before the result of the call that made it
//   upstream-discover  NOT an SDK client: raw 2026-07-28 JSON-RPC (server/discover, tools/list,
//                 tools/call with _meta) to prove upstream.py speaks 2026-07-28; --direct only
//
// Options / environment:
//   --trace  or INTEROP_TRACE=1     print every JSON-RPC message to stderr (>> sent, << received)
//   INTEROP_STDERR=inherit          let the child's stderr through live (default: captured,
//                                   last lines shown on failure)
//   INTEROP_TIMEOUT_MS              deadline for the whole scenario (default 25000)
//   INTEROP_REQUEST_TIMEOUT_MS      per request (default 10000)
//   INTEROP_CONNECT_TIMEOUT_MS      for initialize, which includes the start of the upstream
//                                   process behind the bridge (default 20000)
//   INTEROP_EXIT_GRACE_MS           every scenario ends by closing the server's stdin, as an editor
//                                   does; the server must exit by itself within this time
//                                   (default 1900, i.e. before the SDK's SIGTERM at 2000; 0 = no check)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    ElicitRequestSchema,
    CreateMessageRequestSchema,
    ToolListChangedNotificationSchema,
    ResourceListChangedNotificationSchema,
    ResourceUpdatedNotificationSchema,
    LoggingMessageNotificationSchema,
    ListRootsRequestSchema
} from '@modelcontextprotocol/sdk/types.js';
import { isDeepStrictEqual } from 'node:util';

const EXPECTED_PROTOCOL = '2025-11-25';
const SCENARIO_TIMEOUT_MS = Number(process.env.INTEROP_TIMEOUT_MS || 25000);
const REQUEST_TIMEOUT_MS = Number(process.env.INTEROP_REQUEST_TIMEOUT_MS || 10000);
const CONNECT_TIMEOUT_MS = Number(process.env.INTEROP_CONNECT_TIMEOUT_MS || 20000);
const EXIT_GRACE_MS = Number(process.env.INTEROP_EXIT_GRACE_MS ?? 1900);

// ---------- command line ----------
const argv = process.argv.slice(2);
let trace = process.env.INTEROP_TRACE === '1';
let scenario = null;
let cmd = null;
while (argv.length) {
    const a = argv.shift();
    if (a === '--') { cmd = argv.splice(0); break; }
    if (a === '--trace') trace = true;
    else if (!scenario && !a.startsWith('-')) scenario = a;
    else { usage(`unexpected argument ${a}`); }
}
function usage(msg) {
    console.error(`${msg}\nusage: node client.mjs [--trace] SCENARIO -- CMD [ARGS...]\nscenarios: ${Object.keys(SCENARIOS).join(', ')}`);
    process.exit(2);
}

// ---------- helpers ----------
const short = (o, n = 600) => {
    const s = typeof o === 'string' ? o : JSON.stringify(o);
    return s === undefined ? String(s) : s.length > n ? `${s.slice(0, n)}...<${s.length - n} more>` : s;
};
class CheckError extends Error {}
let currentStep = 'start';
const step = name => { currentStep = name; if (trace) console.error(`-- step: ${name}`); };
function expect(cond, msg) { if (!cond) throw new CheckError(msg); }
function expectEqual(actual, expected, what) {
    if (!isDeepStrictEqual(actual, expected)) {
        throw new CheckError(`${what}: expected ${short(expected, 300)}, got ${short(actual, 300)}`);
    }
}
const req = { timeout: REQUEST_TIMEOUT_MS };

// Single text content, exact text; also rejects isError results.
function expectText(result, text, what) {
    expect(result && Array.isArray(result.content), `${what}: result has no content array: ${short(result)}`);
    expect(result.isError !== true, `${what}: isError is true: ${short(result)}`);
    expectEqual(result.content.length, 1, `${what}: number of content items`);
    expectEqual(result.content[0].type, 'text', `${what}: content[0].type`);
    expectEqual(result.content[0].text, text, `${what}: content[0].text`);
}

// Resolves when pred() becomes true (polled on every notification and every 50 ms).
function waitFor(pred, ms, what) {
    return new Promise((resolve, reject) => {
        const t0 = Date.now();
        const tick = () => {
            if (pred()) return resolve();
            if (Date.now() - t0 > ms) return reject(new CheckError(`timed out after ${ms} ms waiting for ${what}`));
            setTimeout(tick, 50);
        };
        tick();
    });
}

// ---------- connection ----------
// Every scenario gets a fresh client + child process.
async function connect(ctx, capabilities = {}) {
    const client = new Client({ name: 'mcp-bridge-interop', version: '1.0.0' }, { capabilities });
    const inheritStderr = process.env.INTEROP_STDERR === 'inherit';
    const transport = new StdioClientTransport({
        command: cmd[0],
        args: cmd.slice(1),
        // The SDK passes only a minimal environment unless env is given.
        env: { ...process.env },
        stderr: inheritStderr ? 'inherit' : 'pipe'
    });
    if (!inheritStderr) {
        transport.stderr.on('data', chunk => {
            ctx.stderr += chunk.toString();
            if (ctx.stderr.length > 200_000) ctx.stderr = ctx.stderr.slice(-100_000);
        });
    }
    // Wrap the transport: record the raw initialize result and optionally trace the wire.
    const origSend = transport.send.bind(transport);
    transport.send = async (msg, o) => {
        if (msg?.method === 'initialize') ctx.initId = msg.id;
        if (trace) console.error('>> ' + short(msg, 2000));
        return origSend(msg, o);
    };
    const origStart = transport.start.bind(transport);
    transport.start = async () => {
        const inner = transport.onmessage;
        transport.onmessage = (msg, extra) => {
            if (trace) console.error('<< ' + short(msg, 2000));
            if (msg && msg.id === ctx.initId && msg.result) ctx.initResult = msg.result;
            // The SDK hands notifications to their handlers a microtask later than responses:
            // a progress notification read in the same chunk as its request's result finds
            // no handler (onprogress never sees it). The wire keeps them all.
            if (msg?.method === 'notifications/progress') ctx.progress.push(msg.params);
            inner?.(msg, extra);
        };
        await origStart();
        ctx.childPid = transport.pid;
        // Remember how the child ended, for the FAIL line (e.g. "Connection closed").
        transport._process?.once('exit', (code, signal) => {
            ctx.childExit = signal ? `signal ${signal}` : `code ${code}`;
            ctx.childExitAt = performance.now();
        });
    };
    ctx.transport = transport;
    ctx.client = client;
    return client;
}

// initialize + the checks every scenario shares
async function initialize(ctx, client) {
    step('initialize');
    await client.connect(ctx.transport, { timeout: CONNECT_TIMEOUT_MS });
    const init = ctx.initResult;
    expect(init, 'no initialize result seen on the wire');
    expectEqual(init.protocolVersion, EXPECTED_PROTOCOL, 'initialize result protocolVersion');
    const info = client.getServerVersion();
    expect(info && typeof info.name === 'string' && info.name.length > 0,
        `serverInfo.name must be a non-empty string, got ${short(info)}`);
    return info;
}

// ---------- scenarios ----------
const SCENARIOS = {
    async basic(ctx) {
        const client = await connect(ctx, {});
        const info = await initialize(ctx, client);
        const caps = client.getServerCapabilities() ?? {};
        for (const c of ['tools', 'resources', 'prompts']) {
            expect(caps[c] && typeof caps[c] === 'object', `server capabilities lack "${c}": ${short(caps)}`);
        }

        step('tools/list');
        const { tools } = await client.listTools(undefined, req);
        const names = tools.map(t => t.name);
        for (const n of ['echo', 'add', 'ask_name', 'flip_tools']) {
            expect(names.includes(n), `tools/list lacks "${n}"; got ${short(names)}`);
        }
        const echo = tools.find(t => t.name === 'echo');
        expectEqual(echo.inputSchema?.type, 'object', 'echo inputSchema.type');
        expectEqual(echo.inputSchema?.required, ['message'], 'echo inputSchema.required');

        step('tools/call echo');
        const msg = 'hello interop \u00e9\u2713 \u4e16\u754c "quoted" \\ back\nslash';
        const r1 = await client.callTool({ name: 'echo', arguments: { message: msg } }, undefined, req);
        expectText(r1, `Echo: ${msg}`, 'echo');
        // The Python server also returns structured content; the SDK validated it against echo's outputSchema.
        expectEqual(r1.structuredContent, { result: `Echo: ${msg}` }, 'echo structuredContent');

        step('tools/call add');
        const r2 = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, undefined, req);
        expectText(r2, '5', 'add');
        expectEqual(r2.structuredContent, { result: 5 }, 'add structuredContent');

        step('resources/list');
        const { resources } = await client.listResources(undefined, req);
        const cfg = resources.find(r => r.uri === 'config://app');
        expect(cfg, `resources/list lacks config://app; got ${short(resources.map(r => r.uri))}`);
        expectEqual(cfg.mimeType, 'application/json', 'config://app mimeType in resources/list');

        step('resources/read config://app');
        const rr = await client.readResource({ uri: 'config://app' }, req);
        expectEqual(rr.contents?.length, 1, 'resources/read number of contents');
        expectEqual(rr.contents[0].uri, 'config://app', 'resources/read contents[0].uri');
        expectEqual(rr.contents[0].text, '{"feature":true}', 'resources/read contents[0].text');
        expectEqual(rr.contents[0].mimeType, 'application/json', 'resources/read contents[0].mimeType');

        step('prompts/list');
        const { prompts } = await client.listPrompts(undefined, req);
        const rc = prompts.find(p => p.name === 'review-code');
        expect(rc, `prompts/list lacks review-code; got ${short(prompts.map(p => p.name))}`);
        expectEqual((rc.arguments ?? []).map(a => [a.name, a.required === true]), [['language', true], ['code', true]],
            'review-code arguments [name, required]');

        step('prompts/get review-code');
        const pg = await client.getPrompt({ name: 'review-code', arguments: { language: 'rust', code: 'fn main() {}' } }, req);
        expectEqual(pg.messages?.length, 1, 'prompts/get number of messages');
        expectEqual(pg.messages[0].role, 'user', 'prompts/get messages[0].role');
        expectEqual(pg.messages[0].content, { type: 'text', text: 'Review this rust:\nfn main() {}' }, 'prompts/get messages[0].content');

        return `initialize ${EXPECTED_PROTOCOL} (server "${info.name}"), ${tools.length} tools, echo + add exact, ` +
            'resources/read config://app exact, prompts/get review-code exact';
    },

    // The embedded bridge's example (examples/embedded/main.rs) as the server, no bridge process:
    // its legacy path must serve a real 2025-11-25 client tools, prompts, resources, an input
    // request and a list change (which must arrive before the result of the call that made it).
    async embedded(ctx) {
        const client = await connect(ctx, { elicitation: { form: {} } });
        let changed = 0;
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
        const asked = [];
        client.setRequestHandler(ElicitRequestSchema, async request => {
            asked.push(request.params);
            return { action: 'accept', content: { name: 'Ada' } };
        });
        const info = await initialize(ctx, client);
        expectEqual(info, { name: 'embedded-example', version: '1.0.0' }, 'serverInfo');

        step('tools/list');
        const { tools } = await client.listTools(undefined, req);
        expectEqual(tools.map(t => t.name), ['echo', 'ask_name', 'add_tool'], 'tool names');
        step('tools/call echo');
        expectText(await client.callTool({ name: 'echo', arguments: { text: 'hé ✓' } }, undefined, req),
            'hé ✓', 'echo');
        step('prompts/get greet');
        const { prompts } = await client.listPrompts(undefined, req);
        expectEqual(prompts, [{ name: 'greet' }], 'prompts/list');
        const pg = await client.getPrompt({ name: 'greet' }, req);
        expectEqual(pg.messages, [{ role: 'user', content: { type: 'text', text: 'Say hi.' } }], 'prompts/get');
        step('resources/read example://readme');
        const { resources } = await client.listResources(undefined, req);
        expectEqual(resources, [{ name: 'readme', uri: 'example://readme' }], 'resources/list');
        const rr = await client.readResource({ uri: 'example://readme' }, req);
        expectEqual(rr.contents, [{ uri: 'example://readme', text: 'Hi.' }], 'resources/read');

        step('tools/call ask_name (an input request)');
        expectText(await client.callTool({ name: 'ask_name', arguments: {} }, undefined, req), 'Hi, Ada!', 'ask_name');
        expectEqual(asked.length, 1, 'elicitation/create requests');
        expectEqual(asked[0].message, 'Your name?', 'elicitation message');

        step('tools/call add_tool (a list change)');
        // The listen stream's first acknowledgment gives one change per list: wait for it.
        await waitFor(() => changed >= 1, REQUEST_TIMEOUT_MS, 'the opening tools list change');
        const before = changed;
        const r = await client.callTool({ name: 'add_tool', arguments: {} }, undefined, req);
        expectText(r, 'The tool list changed.', 'add_tool');
        expectEqual(changed - before, 1, 'list changes seen when the result arrived');
        return `initialize ${EXPECTED_PROTOCOL} (server "${info.name}"), echo, prompts/get greet, ` +
            'resources/read example://readme, ask_name with one elicitation, the change before the result';
    },

    async elicit(ctx) {
        const client = await connect(ctx, { elicitation: { form: {} } });
        const seen = [];
        client.setRequestHandler(ElicitRequestSchema, async request => {
            seen.push(request.params);
            return { action: 'accept', content: { name: 'Ada' } };
        });
        await initialize(ctx, client);

        step('tools/call ask_name');
        const r = await client.callTool({ name: 'ask_name', arguments: {} }, undefined, req);
        expectEqual(seen.length, 1, 'number of elicitation/create requests received');
        const p = seen[0];
        expectEqual(p.message, 'What is your name?', 'elicitation/create params.message');
        expect(p.mode === undefined || p.mode === 'form', `elicitation/create params.mode: expected form or absent, got ${short(p.mode)}`);
        expectEqual(p.requestedSchema?.type, 'object', 'elicitation/create requestedSchema.type');
        expectEqual(p.requestedSchema?.properties?.name?.type, 'string', 'elicitation/create requestedSchema.properties.name.type');
        expectText(r, 'Hello, Ada!', 'ask_name');
        return 'elicitation/create "What is your name?" answered accept {name: "Ada"}; result "Hello, Ada!"';
    },

    async 'elicit-2rounds'(ctx) {
        const client = await connect(ctx, { elicitation: { form: {} } });
        const seen = [];
        client.setRequestHandler(ElicitRequestSchema, async request => {
            seen.push(request.params.message);
            if (request.params.message === 'Where to?') return { action: 'accept', content: { destination: 'Lisbon' } };
            if (request.params.message === 'How many nights in Lisbon?') return { action: 'accept', content: { nights: 3 } };
            return { action: 'decline' };
        });
        await initialize(ctx, client);
        step('tools/call plan_trip');
        const r = await client.callTool({ name: 'plan_trip', arguments: {} }, undefined, req);
        expectEqual(seen, ['Where to?', 'How many nights in Lisbon?'], 'elicitation/create messages in order');
        expectText(r, 'trip: Lisbon, 3 nights', 'plan_trip');
        return 'two chained elicitation/create answered; result "trip: Lisbon, 3 nights"';
    },

    async sampling(ctx) {
        const client = await connect(ctx, { sampling: {} });
        const seen = [];
        client.setRequestHandler(CreateMessageRequestSchema, async request => {
            seen.push(request.params);
            return { role: 'assistant', content: { type: 'text', text: 'canned answer' }, model: 'interop-fake-model', stopReason: 'endTurn' };
        });
        await initialize(ctx, client);
        step('tools/call ask_llm');
        const r = await client.callTool({ name: 'ask_llm', arguments: { prompt: 'say hi' } }, undefined, req);
        expectEqual(seen.length, 1, 'number of sampling/createMessage requests received');
        expectEqual(seen[0].messages, [{ role: 'user', content: { type: 'text', text: 'say hi' } }], 'sampling/createMessage params.messages');
        expectEqual(seen[0].maxTokens, 100, 'sampling/createMessage params.maxTokens');
        expectText(r, 'LLM said: canned answer', 'ask_llm');
        return 'sampling/createMessage answered; result "LLM said: canned answer"';
    },

    async 'list-changed'(ctx) {
        const client = await connect(ctx, {});
        let changed = 0;
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
        client.setNotificationHandler(LoggingMessageNotificationSchema, () => {});
        await initialize(ctx, client);
        const caps = client.getServerCapabilities() ?? {};
        expectEqual(caps.tools?.listChanged, true, 'server capabilities tools.listChanged');

        step('tools/list (before)');
        let names = (await client.listTools(undefined, req)).tools.map(t => t.name);
        expect(!names.includes('farewell'), `farewell listed before flip_tools: ${short(names)}`);

        for (const [i, enabled] of [[1, true], [2, false]]) {
            step(`tools/call flip_tools #${i}`);
            const r = await client.callTool({ name: 'flip_tools', arguments: {} }, undefined, req);
            expectText(r, enabled ? 'farewell enabled' : 'farewell disabled', `flip_tools #${i}`);
            step(`notifications/tools/list_changed #${i}`);
            await waitFor(() => changed >= i, 5000, `notifications/tools/list_changed #${i}`);
            step(`tools/list after flip #${i}`);
            names = (await client.listTools(undefined, req)).tools.map(t => t.name);
            expectEqual(names.includes('farewell'), enabled, `farewell listed after flip_tools #${i}`);
        }
        return `2 x flip_tools -> ${changed} tools/list_changed; tools/list showed farewell added then removed`;
    },

    async subscribe(ctx) {
        const client = await connect(ctx, {});
        const updates = [];
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => { updates.push(n.params.uri); });
        client.setNotificationHandler(LoggingMessageNotificationSchema, () => {});
        await initialize(ctx, client);
        const caps = client.getServerCapabilities() ?? {};
        expectEqual(caps.resources?.subscribe, true, 'server capabilities resources.subscribe');

        step('resources/subscribe counter://value');
        expectEqual(await client.subscribeResource({ uri: 'counter://value' }, req), {}, 'resources/subscribe result');
        step('tools/call increment #1');
        expectText(await client.callTool({ name: 'increment', arguments: {} }, undefined, req), '1', 'increment #1');
        step('notifications/resources/updated');
        await waitFor(() => updates.length >= 1, 5000, 'notifications/resources/updated for counter://value');
        expectEqual(updates, ['counter://value'], 'updated URIs');
        step('resources/read counter://value');
        const rr = await client.readResource({ uri: 'counter://value' }, req);
        expectEqual(rr.contents?.[0]?.text, '1', 'counter://value after increment #1');

        step('resources/unsubscribe counter://value');
        expectEqual(await client.unsubscribeResource({ uri: 'counter://value' }, req), {}, 'resources/unsubscribe result');
        step('tools/call increment #2');
        expectText(await client.callTool({ name: 'increment', arguments: {} }, undefined, req), '2', 'increment #2');
        await new Promise(resolve => setTimeout(resolve, 500));
        expectEqual(updates, ['counter://value'], 'updated URIs after resources/unsubscribe');
        return 'subscribe -> one resources/updated after increment; none after unsubscribe';
    }
};

// ---------- the era fallback: a 2025-11-25-only upstream behind the bridge ----------
SCENARIOS['legacy-everything'] = async ctx => {
    const client = await connect(ctx, { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
    let toolsChanged = 0, resourcesChanged = 0, rootsAsked = 0;
    const samplings = [], elicitations = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { toolsChanged++; });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { resourcesChanged++; });
    client.setNotificationHandler(LoggingMessageNotificationSchema, () => {});
    client.setRequestHandler(ListRootsRequestSchema, async () => {
        rootsAsked++;
        return { roots: [{ uri: 'file:///interop/root', name: 'interop' }] };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async request => {
        samplings.push(request.params);
        return { role: 'assistant', content: { type: 'text', text: 'canned answer' }, model: 'interop-fake-model', stopReason: 'endTurn' };
    });
    client.setRequestHandler(ElicitRequestSchema, async request => {
        elicitations.push(request.params);
        return { action: 'accept', content: { name: 'Ada' } };
    });
    const info = await initialize(ctx, client);
    expectEqual({ name: info.name, version: info.version }, { name: 'mcp-servers/everything', version: '2.0.0' }, 'serverInfo');
    // The server's own capabilities: the translating bridge never offers tasks.
    expectEqual(ctx.initResult.capabilities?.tasks?.requests, { tools: { call: {} } }, 'initialize result capabilities.tasks.requests');

    // Over HTTP (INTEROP_LEGACY_HTTP=1: server-everything on 2025-11-25 Streamable HTTP) the
    // server sends tools/list_changed while it handles notifications/initialized, before any
    // GET stream can be open: no client gets it there (a direct TS SDK 1.x client neither).
    const overHttp = process.env.INTEROP_LEGACY_HTTP === '1';
    if (!overHttp) {
        step('tools/list_changed after initialized (conditional tools)');
        await waitFor(() => toolsChanged >= 1, 5000, 'notifications/tools/list_changed');
    }
    step('roots/list asked of the client');
    await waitFor(() => rootsAsked >= 1, 5000, 'roots/list');

    step('tools/list');
    const names = (await client.listTools(undefined, req)).tools.map(t => t.name);
    for (const n of ['echo', 'trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list', 'gzip-file-as-resource']) {
        expect(names.includes(n), `tools/list lacks "${n}"; got ${short(names)}`);
    }

    step('tools/call echo');
    expectText(await client.callTool({ name: 'echo', arguments: { message: 'hi \u00e9' } }, undefined, req), 'Echo: hi \u00e9', 'echo');

    // Short (1 s): the SDK 1.x server's handler sleeps on after the cancel, and its timers
    // keep the server from exiting at the end of its input until they end.
    step('tools/call trigger-long-running-operation: progress, then cancel');
    const progress = [];
    const abort = new AbortController();
    const longCall = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 10 } }, undefined,
        { ...req, signal: abort.signal, onprogress: p => { progress.push(p); if (progress.length === 1) abort.abort('enough'); } });
    const outcome = await longCall.then(() => 'result', err => `rejected: ${err?.message ?? err}`);
    expect(outcome.startsWith('rejected'), `the cancelled call must reject, got ${outcome}`);
    expectEqual(progress[0], { progress: 1, total: 10 }, 'first progress notification');
    // The connection goes on after the cancel.
    expectText(await client.callTool({ name: 'echo', arguments: { message: 'after' } }, undefined, req), 'Echo: after', 'echo after the cancel');

    step('tools/call trigger-sampling-request');
    const s = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi' } }, undefined, req);
    expectEqual(samplings.length, 1, 'number of sampling/createMessage requests');
    expectEqual(samplings[0].messages, [{ role: 'user', content: { type: 'text', text: 'Resource trigger-sampling-request context: say hi' } }], 'sampling/createMessage messages');
    expectEqual(samplings[0].maxTokens, 100, 'sampling/createMessage maxTokens');
    expectEqual(s.content?.[0]?.text, 'LLM sampling result: \n' + JSON.stringify({ model: 'interop-fake-model', stopReason: 'endTurn', role: 'assistant', content: { type: 'text', text: 'canned answer' } }, null, 2), 'trigger-sampling-request result');

    step('tools/call trigger-elicitation-request');
    const e = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }, undefined, req);
    expectEqual(elicitations.length, 1, 'number of elicitation/create requests');
    expectEqual(elicitations[0].message, 'Please provide inputs for the following fields:', 'elicitation/create message');
    expectEqual(e.content?.slice(0, 2), [
        { type: 'text', text: '\u2705 User provided the requested information!' },
        { type: 'text', text: 'User inputs:\n- Name: Ada' }
    ], 'trigger-elicitation-request result');

    step('tools/call get-roots-list');
    const roots = await client.callTool({ name: 'get-roots-list', arguments: {} }, undefined, req);
    expect(roots.content?.[0]?.text?.includes('file:///interop/root'), `get-roots-list does not name the root: ${short(roots)}`);

    step('tools/call gzip-file-as-resource -> resources/list_changed');
    const before = resourcesChanged;
    const gz = await client.callTool({ name: 'gzip-file-as-resource',
        arguments: { name: 'hello.txt.gz', data: 'data:text/plain;base64,aGVsbG8=', outputType: 'resourceLink' } }, undefined, req);
    expectEqual(gz.content?.[0]?.uri, 'demo://resource/session/hello.txt.gz', 'gzip-file-as-resource resource link uri');
    await waitFor(() => resourcesChanged > before, 5000, 'notifications/resources/list_changed');
    const { resources } = await client.listResources(undefined, req);
    expect(resources.some(r => r.uri === 'demo://resource/session/hello.txt.gz'), `resources/list lacks the new resource: ${short(resources.map(r => r.uri))}`);

    // Over HTTP the server answers a POST without a session with HTTP 400 (-32000 "Bad
    // Request: No valid session ID provided").
    const sign = overHttp ? 'HTTP 400' : '-32601 "Method not found"';
    const fellBack = ctx.stderr.includes(`mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier (it answered server/discover with ${sign}): passing the 2025-11-25 protocol through unchanged`);
    expect(fellBack || process.env.INTEROP_STDERR === 'inherit' || ctx.direct, `no fallback info line on stderr: ${short(ctx.stderr.slice(-600))}`);
    return `fell back to pass-through${overHttp ? ' over 2025-11-25 Streamable HTTP' : ''} (server "${info.name}" ${info.version}); ` +
        `${overHttp ? '' : 'tools/list_changed + '}roots/list after initialized, ` +
        'echo, sampling, elicitation, roots, progress then cancel, resources/list_changed exact';
};

// ---------- many servers behind one bridge: mcp-bridge --config FILE ----------
// run.sh writes the file (gateway_config.py): `py` is upstream.py (2026-07-28, translated),
// `everything` server-everything (2025-11-25 only, passed through), `example` the crate's
// mcp-example-server (2026-07-28), `signed` the sign-in fixture's protected endpoint (the
// crate's server with the one tool `echo`, 2026-07-28, behind the fixture authorization
// server's OAuth sign-in, which the gateway's $BROWSER script completes). The editor sees their
// tools and prompts as {server}__{name} and their resources as {server}+{uri} (docs/usage.md,
// "A configuration file of many servers"), in the file's order.
const EVERYTHING_DOCS = new URL('./node_modules/@modelcontextprotocol/server-everything/dist/docs/', import.meta.url);
const GATEWAY_TOOLS = [
    ...['echo', 'add', 'ask_name', 'ask_llm', 'plan_trip', 'countdown', 'flip_tools', 'increment'].map(n => `py__${n}`),
    ...['echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference',
        'get-structured-content', 'get-sum', 'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging',
        'toggle-subscriber-updates', 'trigger-long-running-operation',
        // registered once notifications/initialized shows the client's roots, elicitation and
        // sampling (its registerConditionalTools), then announced by tools/list_changed
        'get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request', 'simulate-research-query'
    ].map(n => `everything__${n}`),
    ...['echo', 'add', 'slow', 'log', 'fail', 'ask_name'].map(n => `example__${n}`),
    'signed__echo'
];
// The longest wait for the exact tool list after initialize: server-everything's conditional
// tools, and `signed` if its sign-in ended after the gateway's initialize answer, each come with
// notifications/tools/list_changed.
const GATEWAY_TOOLS_WAIT_MS = 10000;
// The sign-in line of `signed` on the gateway's stderr (docs/usage.md, "Sign-in").
const SIGNED_SIGN_IN_LINE = 'mcp-bridge: sign in to signed at ';
// [name, [[argument, required]...]]
const GATEWAY_PROMPTS = [
    ['py__review-code', [['language', true], ['code', true]]],
    ['everything__simple-prompt', []],
    ['everything__args-prompt', [['city', true], ['state', false]]],
    ['everything__completable-prompt', [['department', true], ['name', true]]],
    ['everything__resource-prompt', [['resourceType', true], ['resourceId', true]]],
    ['example__greet', [['name', true]]]
];
// [uri, name, mimeType]; server-everything lists its docs folder (libuv's scandir: sorted)
const GATEWAY_RESOURCES = [
    ['py+config://app', 'config', 'application/json'],
    ['py+counter://value', 'counter', 'text/plain'],
    ...['architecture', 'extension', 'features', 'how-it-works', 'instructions', 'startup', 'structure'].map(d =>
        [`everything+demo://resource/static/document/${d}.md`, `${d}.md`, 'text/markdown']),
    ['example+example://readme', 'readme', 'text/plain']
];
const GATEWAY_TEMPLATES = [
    ['py+greeting://{name}', 'greeting'],
    ['everything+demo://resource/dynamic/text/{resourceId}', 'Dynamic Text Resource'],
    ['everything+demo://resource/dynamic/blob/{resourceId}', 'Dynamic Blob Resource'],
    ['example+example://notes/{id}', 'note']
];
const EXAMPLE_README = 'mcp-example-server is a small MCP 2026-07-28 server.\n' +
    'Tools: echo, add, slow, log, fail, ask_name. Prompt: greet.\n' +
    'Resources: example://readme, example://notes/{id}.\n';
const CANNED_SAMPLE = { role: 'assistant', content: { type: 'text', text: 'canned answer' }, model: 'interop-fake-model', stopReason: 'endTurn' };

SCENARIOS.gateway = async ctx => {
    const { readFileSync } = await import('node:fs');
    const { execFileSync } = await import('node:child_process');
    const client = await connect(ctx, { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
    let toolsChanged = 0;
    let roots = [{ uri: 'file:///interop/root', name: 'interop' }];
    const updates = [], logs = [], asked = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { toolsChanged++; });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {});
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => { updates.push(n.params.uri); });
    client.setNotificationHandler(LoggingMessageNotificationSchema, n => { logs.push(n.params); });
    client.setRequestHandler(ListRootsRequestSchema, async (request, extra) => {
        asked.push({ method: 'roots/list', id: extra.requestId });
        return { roots };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
        asked.push({ method: 'sampling/createMessage', id: extra.requestId, params: request.params });
        return CANNED_SAMPLE;
    });
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        asked.push({ method: 'elicitation/create', id: extra.requestId, params: request.params });
        return { action: 'accept', content: { name: 'Ada' } };
    });
    const askedOf = method => asked.filter(a => a.method === method);

    const info = await initialize(ctx, client);
    step('initialize result: the bridge\'s serverInfo, the merged capabilities and instructions');
    const version = execFileSync(cmd[0], ['--version'], { encoding: 'utf8' }).trim();
    expectEqual(`${info.name} ${info.version}`, version, 'serverInfo (as `mcp-bridge --version` gives it)');
    expectEqual(client.getServerCapabilities(), {
        tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true },
        logging: {}, completions: {}
    }, 'capabilities');
    const everythingInstructions = readFileSync(new URL('instructions.md', EVERYTHING_DOCS), 'utf8').trim();
    expectEqual(client.getInstructions(),
        '## py\n\nmcp-bridge interop test upstream (Python mcp 2.3.0)\n\n## everything\n\n' + everythingInstructions,
        'instructions (one heading per server that has any; mcp-example-server has none)');

    step('tools/list: {server}__{name}, in the file\'s order');
    // A list without server-everything's conditional tools (registered after initialized) or
    // `signed`'s (it joins once signed in) is asked again at the next tools/list_changed.
    const listUntil = performance.now() + GATEWAY_TOOLS_WAIT_MS;
    let changes = toolsChanged;
    let tools = (await client.listTools(undefined, req)).tools;
    while (!isDeepStrictEqual(tools.map(t => t.name), GATEWAY_TOOLS)) {
        const changed = await waitFor(() => toolsChanged > changes, Math.max(0, listUntil - performance.now()),
            'notifications/tools/list_changed').then(() => true, () => false);
        if (!changed) {
            expectEqual(tools.map(t => t.name), GATEWAY_TOOLS,
                `tool names (no further notifications/tools/list_changed within ${GATEWAY_TOOLS_WAIT_MS} ms)`);
        }
        changes = toolsChanged;
        tools = (await client.listTools(undefined, req)).tools;
    }
    expectEqual(tools.find(t => t.name === 'py__echo').inputSchema?.required, ['message'], 'py__echo inputSchema.required');
    expectEqual(Object.keys(tools.find(t => t.name === 'everything__get-sum').inputSchema?.properties ?? {}), ['a', 'b'],
        'everything__get-sum inputSchema.properties');
    expectEqual(tools.find(t => t.name === 'example__echo').inputSchema?.required, ['text'], 'example__echo inputSchema.required');
    expectEqual(tools.find(t => t.name === 'signed__echo').inputSchema, { type: 'object' }, 'signed__echo inputSchema');

    step('tools/call, one tool of each server');
    const msg = 'hello gateway \u00e9\u2713 \u4e16\u754c "quoted" \\ back\nslash';
    const pyEcho = await client.callTool({ name: 'py__echo', arguments: { message: msg } }, undefined, req);
    expectText(pyEcho, `Echo: ${msg}`, 'py__echo');
    expectEqual(pyEcho.structuredContent, { result: `Echo: ${msg}` }, 'py__echo structuredContent');
    expectText(await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } }, undefined, req),
        'The sum of 2 and 3 is 5.', 'everything__get-sum');
    const exAdd = await client.callTool({ name: 'example__add', arguments: { a: 2, b: 3 } }, undefined, req);
    expectText(exAdd, '{"sum":5}', 'example__add');
    expectEqual(exAdd.structuredContent, { sum: 5 }, 'example__add structuredContent');
    const signedEcho = await client.callTool({ name: 'signed__echo', arguments: { text: msg } }, undefined, req);
    expectEqual(signedEcho, { content: [{ type: 'text', text: msg }] }, 'signed__echo (behind the sign-in)');

    step('the sign-in of signed: one line on the gateway\'s stderr');
    if (process.env.INTEROP_STDERR !== 'inherit') {
        await waitFor(() => ctx.stderr.includes(SIGNED_SIGN_IN_LINE), REQUEST_TIMEOUT_MS, `"${SIGNED_SIGN_IN_LINE}..." on stderr`);
        expectEqual(ctx.stderr.split('\n').filter(l => l.startsWith(SIGNED_SIGN_IN_LINE)).length, 1, 'sign-in lines of signed');
    }

    step('prompts/list');
    const { prompts } = await client.listPrompts(undefined, req);
    expectEqual(prompts.map(p => [p.name, (p.arguments ?? []).map(a => [a.name, a.required === true])]), GATEWAY_PROMPTS,
        'prompts [name, [[argument, required]]]');
    step('prompts/get, one prompt of each server');
    const pg = await client.getPrompt({ name: 'py__review-code', arguments: { language: 'rust', code: 'fn main() {}' } }, req);
    expectEqual(pg.messages, [{ role: 'user', content: { type: 'text', text: 'Review this rust:\nfn main() {}' } }], 'py__review-code messages');
    const eg = await client.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Lisbon', state: 'PT' } }, req);
    expectEqual(eg.messages, [{ role: 'user', content: { type: 'text', text: 'What\'s weather in Lisbon, PT?' } }], 'everything__args-prompt messages');
    const xg = await client.getPrompt({ name: 'example__greet', arguments: { name: 'Ada' } }, req);
    expectEqual(xg.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to Ada.' } }], 'example__greet messages');
    // An embedded resource of a prompt names the resource as the editor reads it.
    const rg = await client.getPrompt({ name: 'everything__resource-prompt', arguments: { resourceType: 'Text', resourceId: '1' } }, req);
    expectEqual(rg.messages?.[1]?.content?.resource?.uri, 'everything+demo://resource/dynamic/text/1',
        'everything__resource-prompt embedded resource uri');

    step('resources/list and resources/templates/list: {server}+{uri}');
    const { resources } = await client.listResources(undefined, req);
    expectEqual(resources.map(r => [r.uri, r.name, r.mimeType]), GATEWAY_RESOURCES, 'resources [uri, name, mimeType]');
    const { resourceTemplates } = await client.listResourceTemplates(undefined, req);
    expectEqual(resourceTemplates.map(t => [t.uriTemplate, t.name]), GATEWAY_TEMPLATES, 'resource templates [uriTemplate, name]');

    step('resources/read, a resource of each server and a template of two');
    const read = async uri => (await client.readResource({ uri }, req)).contents;
    expectEqual(await read('py+config://app'),
        [{ uri: 'py+config://app', mimeType: 'application/json', text: '{"feature":true}' }], 'py+config://app');
    const features = 'everything+demo://resource/static/document/features.md';
    expectEqual(await read(features),
        [{ uri: features, mimeType: 'text/markdown', text: readFileSync(new URL('features.md', EVERYTHING_DOCS), 'utf8') }], features);
    expectEqual(await read('example+example://readme'),
        [{ uri: 'example+example://readme', mimeType: 'text/plain', text: EXAMPLE_README }], 'example+example://readme');
    expectEqual(await read('py+greeting://Ada'),
        [{ uri: 'py+greeting://Ada', mimeType: 'text/plain', text: 'Hello, Ada!' }], 'py+greeting://Ada (template)');
    expectEqual(await read('example+example://notes/2'),
        [{ uri: 'example+example://notes/2', mimeType: 'text/plain', text: 'Note 2.' }], 'example+example://notes/2 (template)');

    step('a tool\'s resource links name the resources as the editor reads them');
    const links = await client.callTool({ name: 'everything__get-resource-links', arguments: { count: 2 } }, undefined, req);
    expectEqual(links.content?.slice(1).map(c => [c.type, c.uri]), [
        ['resource_link', 'everything+demo://resource/dynamic/blob/1'],
        ['resource_link', 'everything+demo://resource/dynamic/text/2']
    ], 'everything__get-resource-links [type, uri]');
    const linked = await read('everything+demo://resource/dynamic/text/2');
    expectEqual(linked.map(c => [c.uri, c.mimeType]), [['everything+demo://resource/dynamic/text/2', 'text/plain']], 'the linked resource');
    // server-everything puts its clock's time in the text
    expect(/^Resource 2: This is a plaintext resource created at \S.*$/.test(linked[0].text), `the linked resource's text: ${short(linked[0].text)}`);

    step('completion/complete: prompt arguments and templates of each server');
    const complete = (ref, argument, context) => client.complete({ ref, argument, ...(context ? { context } : {}) }, req);
    expectEqual(await complete({ type: 'ref/prompt', name: 'py__review-code' }, { name: 'language', value: 'r' }),
        { completion: { values: ['rust'] } }, 'py__review-code language "r"');
    expectEqual(await complete({ type: 'ref/prompt', name: 'everything__completable-prompt' }, { name: 'department', value: 'S' }),
        { completion: { values: ['Sales', 'Support'], total: 2, hasMore: false } }, 'everything__completable-prompt department "S"');
    expectEqual(await complete({ type: 'ref/prompt', name: 'everything__completable-prompt' }, { name: 'name', value: '' },
        { arguments: { department: 'Sales' } }),
    { completion: { values: ['David', 'Eve', 'Frank'], total: 3, hasMore: false } }, 'everything__completable-prompt name in Sales (context)');
    expectEqual(await complete({ type: 'ref/resource', uri: 'everything+demo://resource/dynamic/text/{resourceId}' }, { name: 'resourceId', value: '7' }),
        { completion: { values: ['7'], total: 1, hasMore: false } }, 'everything template resourceId "7"');
    expectEqual(await complete({ type: 'ref/prompt', name: 'example__greet' }, { name: 'name', value: 'A' }),
        { completion: { values: ['Ada', 'Alan', 'Alice'], total: 3, hasMore: false } }, 'example__greet name "A"');
    expectEqual(await complete({ type: 'ref/resource', uri: 'example+example://notes/{id}' }, { name: 'id', value: '' }),
        { completion: { values: ['1', '2', '3'], total: 3, hasMore: false } }, 'example notes id ""');

    step('resources/subscribe py+counter://value; py__increment -> notifications/resources/updated');
    expectEqual(await client.subscribeResource({ uri: 'py+counter://value' }, req), {}, 'resources/subscribe py+counter://value');
    expectText(await client.callTool({ name: 'py__increment', arguments: {} }, undefined, req), '1', 'py__increment');
    await waitFor(() => updates.length >= 1, 5000, 'notifications/resources/updated for py+counter://value');
    expectEqual(updates, ['py+counter://value'], 'updated URIs');
    expectEqual((await read('py+counter://value'))[0]?.text, '1', 'py+counter://value after py__increment');
    expectEqual(await client.unsubscribeResource({ uri: 'py+counter://value' }, req), {}, 'resources/unsubscribe py+counter://value');

    step('resources/subscribe a server-everything document; its simulated updates');
    expectEqual(await client.subscribeResource({ uri: features }, req), {}, `resources/subscribe ${features}`);
    // The first update goes out at once, then one every 5 s until the tool is called again.
    expectText(await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} }, undefined, req),
        'Started simulated resource updated notifications for session undefined at a 5 second pace. ' +
        'Client will receive updates for any resources the it is subscribed to.', 'everything__toggle-subscriber-updates (on)');
    await waitFor(() => updates.length >= 2, 5000, `notifications/resources/updated for ${features}`);
    expectText(await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} }, undefined, req),
        'Stopped simulated resource updates for session undefined', 'everything__toggle-subscriber-updates (off)');
    expectEqual(updates[1], features, 'the update of server-everything\'s document');
    expectEqual(await client.unsubscribeResource({ uri: features }, req), {}, `resources/unsubscribe ${features}`);

    step('elicitation: one form of each server, through the gateway');
    expectText(await client.callTool({ name: 'py__ask_name', arguments: {} }, undefined, req), 'Hello, Ada!', 'py__ask_name');
    expectText(await client.callTool({ name: 'example__ask_name', arguments: {} }, undefined, req), 'Hello, Ada!', 'example__ask_name');
    const ev = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} }, undefined, req);
    expectEqual(ev.content?.slice(0, 2), [
        { type: 'text', text: '\u2705 User provided the requested information!' },
        { type: 'text', text: 'User inputs:\n- Name: Ada' }
    ], 'everything__trigger-elicitation-request result');
    const forms = askedOf('elicitation/create').map(a => a.params);
    expectEqual(forms.length, 3, 'elicitation/create requests');
    expectEqual(forms[0], { mode: 'form', message: 'What is your name?', requestedSchema: {
        type: 'object', properties: { name: { title: 'Name', type: 'string' } }, required: ['name'] } }, 'py\'s elicitation/create params');
    expectEqual(forms[1], { mode: 'form', message: 'What is your name?', requestedSchema: {
        type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }, 'example\'s elicitation/create params');
    expectEqual(forms[2].message, 'Please provide inputs for the following fields:', 'everything\'s elicitation/create message');
    expectEqual(forms[2].requestedSchema?.properties?.name, { title: 'String', type: 'string', description: 'Your full, legal name' },
        'everything\'s elicitation/create requestedSchema.properties.name');

    step('sampling: py__ask_llm and everything__trigger-sampling-request');
    expectText(await client.callTool({ name: 'py__ask_llm', arguments: { prompt: 'say hi' } }, undefined, req),
        'LLM said: canned answer', 'py__ask_llm');
    expectText(await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'say hi' } }, undefined, req),
        'LLM sampling result: \n' + JSON.stringify({ model: 'interop-fake-model', stopReason: 'endTurn', role: 'assistant', content: { type: 'text', text: 'canned answer' } }, null, 2),
        'everything__trigger-sampling-request');
    expectEqual(askedOf('sampling/createMessage').map(a => a.params), [
        { maxTokens: 100, messages: [{ role: 'user', content: { type: 'text', text: 'say hi' } }] },
        { messages: [{ role: 'user', content: { type: 'text', text: 'Resource trigger-sampling-request context: say hi' } }],
            systemPrompt: 'You are a helpful test server.', maxTokens: 100, temperature: 0.7 }
    ], 'sampling/createMessage params');

    step('roots: server-everything asks roots/list, and again after notifications/roots/list_changed');
    await waitFor(() => askedOf('roots/list').length >= 1, 5000, 'roots/list after initialized');
    const rootsText = list => `Current MCP Roots (${list.length} total):\n\n` +
        list.map((r, i) => `${i + 1}. ${r.name}\n   URI: ${r.uri}`).join('\n\n') + '\n\n' +
        'Note: This server demonstrates the roots protocol capability but doesn\'t actually access files. ' +
        'The roots are provided by the MCP client and can be used by servers that need file system access.';
    expectText(await client.callTool({ name: 'everything__get-roots-list', arguments: {} }, undefined, req), rootsText(roots), 'everything__get-roots-list');
    const rootsAsked = askedOf('roots/list').length;
    roots = [...roots, { uri: 'file:///interop/second', name: 'second' }];
    await client.sendRootsListChanged();
    await waitFor(() => askedOf('roots/list').length > rootsAsked, 5000, 'roots/list after notifications/roots/list_changed');
    await waitFor(() => logs.some(l => l.data === 'Roots updated: 2 root(s) received from client'), 5000,
        'server-everything\'s log of the two roots');
    expectText(await client.callTool({ name: 'everything__get-roots-list', arguments: {} }, undefined, req), rootsText(roots),
        'everything__get-roots-list after the change');

    step('the requests of the servers reach the editor under the bridge\'s ids');
    const ids = asked.map(a => a.id);
    expect(ids.every(id => typeof id === 'string' && /^b-[0-9]+$/.test(id)), `ids of the servers' requests: ${short(ids)}`);
    expectEqual(new Set(ids).size, ids.length, `the servers' request ids are distinct: ${short(ids)}`);

    step('logging/setLevel; notifications/message name their server in logger');
    expectEqual(await client.setLoggingLevel('info', req), {}, 'logging/setLevel');
    expectText(await client.callTool({ name: 'example__log', arguments: { level: 'info', message: 'hello' } }, undefined, req), 'logged', 'example__log');
    await waitFor(() => logs.some(l => l.data === 'hello'), 5000, 'the log message of example__log');
    expectEqual(logs.find(l => l.data === 'hello'), { level: 'info', logger: 'example/mcp-example-server', data: 'hello' },
        'the log message of example__log');

    step('progress: py__countdown and example__slow (on the wire, before the result)');
    ctx.progress.length = 0;
    expectText(await client.callTool({ name: 'py__countdown', arguments: { n: 3 } }, undefined, { ...req, onprogress: () => {} }),
        'completed 3/3', 'py__countdown');
    expectEqual(ctx.progress.map(({ progressToken, ...p }) => p),
        [1, 2, 3].map(i => ({ progress: i, total: 3, message: `step ${i}/3` })), 'py__countdown progress');
    await waitFor(() => logs.filter(l => l.logger === 'py').length >= 3, 5000, 'the log messages of py__countdown');
    expectEqual(logs.filter(l => l.logger === 'py'), [1, 2, 3].map(i => ({ level: 'info', logger: 'py', data: `step ${i}/3` })),
        'the log messages of py__countdown');
    ctx.progress.length = 0;
    expectText(await client.callTool({ name: 'example__slow', arguments: { steps: 2, delay_ms: 0 } }, undefined, { ...req, onprogress: () => {} }),
        'done after 2 steps', 'example__slow');
    expectEqual(ctx.progress.map(({ progressToken, ...p }) => p),
        [1, 2].map(i => ({ progress: i, total: 2, message: `step ${i} of 2` })), 'example__slow progress');

    step('an error of a server reaches the editor as the server gave it');
    const failed = await client.callTool({ name: 'example__fail', arguments: { code: -32000, message: 'boom', data: { x: 1 } } }, undefined, req)
        .then(r => ({ result: r }), e => ({ code: e.code, message: e.message, data: e.data }));
    expectEqual(failed, { code: -32000, message: 'MCP error -32000: boom', data: { x: 1 } }, 'example__fail');

    return `4 servers (2026-07-28 py, 2025-11-25 everything, 2026-07-28 example, 2026-07-28 signed behind an OAuth sign-in): ` +
        `${tools.length} tools, ${prompts.length} prompts, ${resources.length} resources, ${resourceTemplates.length} templates exact; ` +
        'a call of each, reads, prompts, completions of the first three; ' +
        'subscriptions of two; elicitation of three, sampling of two, roots and their change; logging, progress, an error';
};

// ---------- raw 2026-07-28 probe (no SDK): proves upstream.py itself speaks 2026-07-28 ----------
// Only meaningful with --direct (run.sh --direct upstream-discover): the bridge is a 2025-11-25 server.
SCENARIOS['upstream-discover'] = async ctx => {
    const { spawn } = await import('node:child_process');
    const child = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env } });
    ctx.childPid = child.pid;
    child.stderr.on('data', c => { ctx.stderr += c.toString(); });
    child.once('exit', (code, signal) => { ctx.childExit = signal ? `signal ${signal}` : `code ${code}`; ctx.childExitAt = performance.now(); });
    const waiting = new Map();
    let buf = '';
    child.stdout.on('data', c => {
        buf += c.toString();
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i); buf = buf.slice(i + 1);
            if (!line.trim()) continue;
            if (trace) console.error('<< ' + short(line, 2000));
            const msg = JSON.parse(line);
            if (msg.id !== undefined && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
        }
    });
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    let nextId = 1;
    const call = (method, params = {}) => new Promise((resolve, reject) => {
        const id = nextId++;
        const msg = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
        waiting.set(id, resolve);
        setTimeout(() => reject(new CheckError(`${method}: no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS).unref();
        if (trace) console.error('>> ' + JSON.stringify(msg));
        child.stdin.write(JSON.stringify(msg) + '\n');
    });
    step('server/discover (2026-07-28)');
    const d = await call('server/discover');
    expect(d.result, `server/discover failed: ${short(d)}`);
    expectEqual(d.result.supportedVersions, ['2026-07-28'], 'server/discover supportedVersions');
    expectEqual(d.result.resultType, 'complete', 'server/discover resultType');
    const name = d.result._meta?.['io.modelcontextprotocol/serverInfo']?.name;
    expect(typeof name === 'string' && name.length > 0, `server/discover _meta serverInfo.name: ${short(d.result._meta)}`);
    step('tools/list (2026-07-28)');
    const t = await call('tools/list');
    expect(t.result, `tools/list failed: ${short(t)}`);
    const names = t.result.tools.map(x => x.name);
    for (const n of ['echo', 'add', 'ask_name', 'flip_tools']) expect(names.includes(n), `tools/list lacks ${n}: ${short(names)}`);
    step('tools/call echo (2026-07-28)');
    const e = await call('tools/call', { name: 'echo', arguments: { message: 'hi' } });
    expectEqual(e.result?.resultType, 'complete', 'tools/call resultType');
    expectText(e.result, 'Echo: hi', 'echo (2026-07-28)');
    step('close (stdin EOF, server must exit by itself)');
    const t0 = performance.now();
    child.stdin.end();
    await waitFor(() => ctx.childExit !== undefined, 3000, 'the server to exit after stdin EOF').catch(() => {});
    expect(ctx.childExit !== undefined && ctx.childExitAt - t0 < (EXIT_GRACE_MS || 3000),
        `server did not exit within ${EXIT_GRACE_MS} ms of stdin EOF`);
    return `server/discover -> supportedVersions ["2026-07-28"] (server "${name}"), tools/list, tools/call echo with _meta`;
};

// ---------- main ----------
if (!scenario) usage('no scenario given');
if (!SCENARIOS[scenario]) usage(`unknown scenario "${scenario}"`);
if (!cmd || cmd.length === 0) usage('no server command after --');

const ctx = { stderr: '', initId: undefined, initResult: undefined, progress: [], direct: process.env.INTEROP_DIRECT === '1' };
let finished = false;

// The SDK forgets the child as soon as close() starts, so use the pid recorded at start.
// SIGTERM first (lets a bridge stop its upstream), SIGKILL after 1 s.
async function killChild() {
    const pid = ctx.childPid;
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    if (!pid || !alive()) return;
    try { process.kill(pid, 'SIGTERM'); } catch { return; }
    for (let i = 0; i < 20 && alive(); i++) await new Promise(r => setTimeout(r, 50));
    if (alive()) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
}
async function fail(why) {
    if (finished) return;
    finished = true;
    const exited = ctx.childExit ? ` (server process exited: ${ctx.childExit})` : '';
    console.log(`FAIL ${scenario}: ${currentStep}: ${why.replace(/\s*\n\s*/g, ' | ')}${exited}`);
    if (ctx.stderr.trim()) {
        const lines = ctx.stderr.trimEnd().split('\n');
        console.error(`--- last ${Math.min(lines.length, 40)} stderr lines of: ${cmd.join(' ')}`);
        console.error(lines.slice(-40).join('\n'));
        console.error('---');
    }
    await killChild();
    process.exit(1);
}

const deadline = setTimeout(() => fail(`scenario deadline of ${SCENARIO_TIMEOUT_MS} ms exceeded`), SCENARIO_TIMEOUT_MS);
try {
    const what = await SCENARIOS[scenario](ctx);
    // An editor ends a stdio server by closing its stdin; the server should then exit by itself.
    // The SDK's close() ends stdin, then sends SIGTERM after 2 s and SIGKILL after 2 more.
    if (ctx.client) step('close (stdin EOF, server must exit by itself)');
    const t0 = performance.now();
    if (ctx.client) await Promise.race([ctx.client.close(), new Promise(r => setTimeout(r, 5000).unref())]);
    if (ctx.client && EXIT_GRACE_MS > 0 && !finished) {
        const after = ctx.childExitAt === undefined ? undefined : Math.round(ctx.childExitAt - t0);
        expect(after !== undefined && after < EXIT_GRACE_MS && !ctx.childExit.startsWith('signal'),
            `server did not exit within ${EXIT_GRACE_MS} ms of its stdin closing ` +
            `(${after === undefined ? 'still running' : `exit ${ctx.childExit} after ${after} ms`}; the SDK sends SIGTERM at 2000 ms)`);
    }
    if (!finished) {
        finished = true;
        clearTimeout(deadline);
        console.log(`ok ${scenario}: ${what}`);
        await killChild();
        process.exit(0);
    }
} catch (e) {
    let why = e instanceof CheckError ? e.message : `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`;
    if (!(e instanceof CheckError) && e?.data !== undefined) why += ` (error data: ${short(e.data, 400)})`;
    await fail(why);
}
