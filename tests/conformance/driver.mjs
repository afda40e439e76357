#!/usr/bin/env node
// The client under test for `conformance client`: a real 2025-11-25 client (TS SDK 1.x `Client`,
// initialize handshake, stdio) that starts mcp-bridge, whose upstream is the suite's test server.
// The harness judges what the BRIDGE sends upstream; this driver only does, per scenario, what the
// suite's own example client (examples/clients/typescript/everything-client.ts) does, the way an
// editor would ask it of the bridge.
//
//   conformance client --scenario S --command "node driver.mjs -- BRIDGE [ARGS...]"
//     (the harness appends the test server URL as the last argument; the driver puts the
//      scenario's bridge options before it: --redirect-port, --client-id, --client-metadata-url)
//
// Reads MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and MCP_CONFORMANCE_CONTEXT
// (set by the harness).
// Prints one JSON line {scenario, ok, steps}; exit 0 only if every step succeeded (scenarios that
// expect the sign-in to be refused set allowClientError in the suite, so exit 1 is fine there).
import { createRequire } from 'node:module';
import net from 'node:net';
import { spawn } from 'node:child_process';
import path from 'node:path';

import { fileURLToPath } from 'node:url';
// Packages resolve beside this file (tests/conformance/node_modules), or from $PEERS_NODE_MODULES_DIR.
const require = createRequire(path.join(process.env.PEERS_NODE_MODULES_DIR || path.dirname(fileURLToPath(import.meta.url)), 'x.js'));
const load = async name => import(require.resolve(name));
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await load('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } = await load('@modelcontextprotocol/sdk/types.js');

const argv = process.argv.slice(2);
const trace = argv[0] === '--trace' ? (argv.shift(), true) : false;
if (argv[0] === '--') argv.shift();
if (argv.length < 2) { console.error('usage: driver.mjs [--trace] -- BRIDGE [ARGS...] URL'); process.exit(2); }
const url = argv.at(-1);
const bridge = argv.slice(0, -1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');

// The suite's fixed client ID metadata document URL (basic-cimd.ts: CIMD_CLIENT_METADATA_URL): the
// scenario accepts exactly this URL as client_id, as a user would give theirs.
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';

const freePort = () => new Promise((res, rej) => {
    const s = net.createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); });
});

// The issuer of a pre-registered client is part of its registration: a user copies it from the
// authorization server's console. The test's authorization server has a random port, so the driver
// reads it where a user would look it up: the protected resource metadata (RFC 9728 §3).
async function issuerOf(serverUrl) {
    const u = new URL(serverUrl);
    const prm = await (await fetch(new URL(`/.well-known/oauth-protected-resource${u.pathname}`, u))).json();
    return prm.authorization_servers[0];
}

const env = { ...process.env };
const extra = [];
if (scenario.startsWith('auth/')) {
    extra.push('--redirect-port', String(await freePort()));
    if (scenario === 'auth/basic-cimd') extra.push('--client-metadata-url', CIMD_URL);
    if (scenario === 'auth/pre-registration' || scenario === 'auth/client-credentials-basic') {
        extra.push('--client-id', context.client_id, '--client-issuer', await issuerOf(url));
        env.MCP_BRIDGE_CLIENT_SECRET = context.client_secret;
    }
    if (scenario.startsWith('auth/client-credentials-')) extra.push('--grant', 'client-credentials');
}
const cmd = [...bridge, ...extra, url];
console.error(`[driver] scenario=${scenario} version=${process.env.MCP_CONFORMANCE_PROTOCOL_VERSION} bridge: ${cmd.join(' ')}`);

const results = [];
const short = (o, n = 300) => { const s = JSON.stringify(o) ?? 'undefined'; return s.length > n ? s.slice(0, n) + '...' : s; };
async function step(name, fn) {
    try {
        const r = await fn();
        results.push({ step: name, ok: true, result: short(r, 200) });
        return r;
    } catch (e) {
        results.push({ step: name, ok: false, error: String(e?.message ?? e) });
        return undefined;
    }
}

function fill(schema) {
    const o = {};
    for (const [k, s] of Object.entries(schema?.properties ?? {})) {
        if (s.default !== undefined) o[k] = s.default;
        else if (s.enum) o[k] = s.enum[0];
        else if (s.type === 'array') o[k] = [];
        else if (s.type === 'object') o[k] = {};
        else if (s.type === 'boolean') o[k] = true;
        else if (s.type === 'integer' || s.type === 'number') o[k] = s.minimum ?? 1;
        else o[k] = 'us-west1';
    }
    return o;
}

// elicitation-sep1034-client-defaults: the example client declares applyDefaults and answers {}
// (the SDK fills the defaults of the requested schema).
const capabilities = scenario === 'elicitation-sep1034-client-defaults'
    ? { elicitation: { form: { applyDefaults: true } } } // SDK 1.32: form.applyDefaults (client/index.js)
    : { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } };
const client = new Client({ name: 'conformance-driver', version: '1.0.0' }, { capabilities });

// A URL elicitation (the bridge's sign-in after `initialized`, 2025-11-25 client/elicitation "URL
// mode"): the consenting user opens the URL, i.e. $BROWSER (consenting-browser) follows it.
const openUrl = u => { if (process.env.BROWSER) spawn(process.env.BROWSER, [u], { stdio: 'ignore', detached: true }).unref(); };
let onElicit = async req => {
    if (req.params.mode === 'url') { openUrl(req.params.url); return { action: 'accept' }; }
    return { action: 'accept', content: fill(req.params.requestedSchema) };
};
client.setRequestHandler(ElicitRequestSchema, req => onElicit(req));
if (capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'driver', stopReason: 'endTurn' }));
if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///tmp', name: 'tmp' }] }));

const transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: 'inherit', env });
if (trace) {
    const send = transport.send.bind(transport);
    transport.send = async (m, o) => { console.error('[driver] >> ' + short(m, 600)); return send(m, o); };
    const start = transport.start.bind(transport);
    transport.start = async () => {
        const inner = transport.onmessage;
        transport.onmessage = (m, x) => { console.error('[driver] << ' + short(m, 600)); inner?.(m, x); };
        return start();
    };
}

// The harness kills only its shell at --timeout (spawn with shell: true) and then waits for the
// pipes to close; end the driver (and so the bridge) before that, by its own deadline.
const DEADLINE_MS = Number(process.env.DRIVER_DEADLINE_MS || 25000);
setTimeout(() => { console.log(JSON.stringify({ scenario, ok: false, steps: results, deadline: DEADLINE_MS })); process.exit(3); }, DEADLINE_MS).unref();
const connected = await step('initialize', async () => { await client.connect(transport); return client.getServerVersion(); });
const call = (name, args = {}) => step(`tools/call ${name}`, () => client.callTool({ name, arguments: args }));
const list = () => step('tools/list', async () => (await client.listTools()).tools);

if (connected) {
    switch (scenario) {
        case 'initialize':
        case 'tools_call': {
            // everything-client runBasicClient: list, call the first tool with {a: 2, b: 3}
            const tools = await list();
            if (tools?.[0]) await call(tools[0].name, { a: 2, b: 3 });
            break;
        }
        case 'sse-retry': {
            // sse-retry-test.ts: call test_reconnection; its answer comes on the resumed GET stream
            await list();
            await call('test_reconnection');
            break;
        }
        case 'elicitation-sep1034-client-defaults': {
            onElicit = async () => ({ action: 'accept', content: {} });
            await list();
            await call('test_client_elicitation_defaults');
            break;
        }
        case 'request-metadata':
        case 'json-schema-ref-no-deref':
            await list();
            break;
        case 'json-schema-2020-12-preservation': {
            const tools = await list();
            const focal = tools?.find(t => t.name === 'json_schema_2020_12_tool');
            await call('json_schema_echo', { schema: focal?.inputSchema ?? {} });
            break;
        }
        case 'sep-2322-client-request-state': {
            // everything-client runMRTRClient: an unrelated call between the first answer and the
            // retry of test_mrtr_echo_state. Through the bridge the retry is the bridge's, so the
            // editor's unrelated call goes while the elicitation of the first round is open.
            await list();
            let first = true;
            onElicit = async () => {
                if (first) { first = false; await call('test_mrtr_unrelated'); }
                return { action: 'accept', content: { confirmed: true } };
            };
            await call('test_mrtr_echo_state');
            await call('test_mrtr_no_state');
            await call('test_mrtr_no_result_type');
            break;
        }
        case 'http-standard-headers': {
            const tools = await list();
            for (const t of tools ?? []) await call(t.name);
            const res = await step('resources/list', async () => (await client.listResources()).resources);
            for (const r of res ?? []) await step(`resources/read ${r.uri}`, () => client.readResource({ uri: r.uri }));
            const prompts = await step('prompts/list', async () => (await client.listPrompts()).prompts);
            for (const p of prompts ?? []) await step(`prompts/get ${p.name}`, () => client.getPrompt({ name: p.name }));
            break;
        }
        case 'http-custom-headers': {
            // the scenario's context names the calls and their exact arguments (null included:
            // "omit Mcp-Param-* when the value is null")
            await list();
            for (const c of context.toolCalls ?? []) await call(c.name, c.arguments);
            break;
        }
        case 'http-invalid-tool-headers': {
            // an editor calls what it is shown: every listed tool; the invalid ones must not be listed
            const tools = await list();
            for (const t of tools ?? []) await call(t.name, fill(t.inputSchema));
            if (process.env.DRIVER_STRICT) {
                // an editor with a stale list: the bridge must not send a call of an excluded tool
                for (const n of ['invalid_empty_header', 'invalid_object_header', 'invalid_duplicate_same_case', 'invalid_space_in_name'])
                    if (!tools?.some(t => t.name === n)) await call(n, { value: 'x' });
            }
            break;
        }
        default:
            if (scenario.startsWith('auth/')) {
                // everything-client runAuthClient: list, then call test-tool (step-up needs the call)
                await list();
                await call('test-tool');
                if (scenario === 'auth/authorization-server-migration') await call('test-tool');
            } else {
                const tools = await list();
                for (const t of tools ?? []) await call(t.name, fill(t.inputSchema));
            }
    }
}
await client.close().catch(() => {});
const ok = results.every(r => r.ok);
console.log(JSON.stringify({ scenario, ok, steps: results }));
process.exit(ok ? 0 : 1);
