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
//
// Options / environment:
//   --trace  or INTEROP_TRACE=1     print every JSON-RPC message to stderr (>> sent, << received)
//   INTEROP_STDERR=inherit          let the child's stderr through live (default: captured,
//                                   last lines shown on failure)
//   INTEROP_TIMEOUT_MS              deadline for the whole scenario (default 25000)
//   INTEROP_REQUEST_TIMEOUT_MS      per request (default 10000)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    ElicitRequestSchema,
    ToolListChangedNotificationSchema,
    LoggingMessageNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';
import { isDeepStrictEqual } from 'node:util';

const EXPECTED_PROTOCOL = '2025-11-25';
const SCENARIO_TIMEOUT_MS = Number(process.env.INTEROP_TIMEOUT_MS || 25000);
const REQUEST_TIMEOUT_MS = Number(process.env.INTEROP_REQUEST_TIMEOUT_MS || 10000);

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
            inner?.(msg, extra);
        };
        return origStart();
    };
    ctx.transport = transport;
    ctx.client = client;
    return client;
}

// initialize + the checks every scenario shares
async function initialize(ctx, client) {
    step('initialize');
    await client.connect(ctx.transport, req);
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
    }
};

// ---------- main ----------
if (!scenario) usage('no scenario given');
if (!SCENARIOS[scenario]) usage(`unknown scenario "${scenario}"`);
if (!cmd || cmd.length === 0) usage('no server command after --');

const ctx = { stderr: '', initId: undefined, initResult: undefined };
let finished = false;

function killChild() {
    const pid = ctx.transport?.pid;
    if (pid) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
}
function fail(why) {
    if (finished) return;
    finished = true;
    console.log(`FAIL ${scenario}: ${currentStep}: ${why.replace(/\s*\n\s*/g, ' | ')}`);
    if (ctx.stderr.trim()) {
        const lines = ctx.stderr.trimEnd().split('\n');
        console.error(`--- last ${Math.min(lines.length, 40)} stderr lines of: ${cmd.join(' ')}`);
        console.error(lines.slice(-40).join('\n'));
        console.error('---');
    }
    killChild();
    process.exit(1);
}

const deadline = setTimeout(() => fail(`scenario deadline of ${SCENARIO_TIMEOUT_MS} ms exceeded`), SCENARIO_TIMEOUT_MS);
try {
    const what = await SCENARIOS[scenario](ctx);
    step('close');
    // close() ends stdin, then SIGTERM/SIGKILL after 2 s each; do not let a slow exit fail a passing scenario.
    await Promise.race([ctx.client.close(), new Promise(r => setTimeout(r, 5000).unref())]);
    if (!finished) {
        finished = true;
        clearTimeout(deadline);
        console.log(`ok ${scenario}: ${what}`);
        killChild();
        process.exit(0);
    }
} catch (e) {
    const why = e instanceof CheckError ? e.message : `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`;
    fail(why);
}
