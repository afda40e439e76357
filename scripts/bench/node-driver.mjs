#!/usr/bin/env node
// The Node.js side of `scripts/bench-e2e.py --node`: one process holds one client per path
// and times sequential tools/call echo {text: "hello"} on each, interleaved in batches, so the
// machine's noise weighs on every path alike. A path's client is
//   "sdk"         the TS SDK 1.x client (@modelcontextprotocol/sdk 1.32.2, the client of
//                 VS Code, revision 2025-11-25): the server answers on its 2025-11-25 arm;
//   "raw-legacy"  a raw JSON-RPC client on the 2025-11-25 arm (initialize, initialized);
//   "raw-modern"  a raw JSON-RPC client sending exactly the bridge's frames: server/discover,
//                 a subscriptions/listen, every request with the bridge's _meta, so the server
//                 answers on its 2026-07-28 arm, the arm the bridge uses.
// The two raw clients differ only in the arm, so their difference is the cost of the modern
// arm with the same client (the same-arm floor of bench-e2e.py).
//
//   node node-driver.mjs REQUESTS WARMUP BATCH PATHS_JSON
//   PATHS_JSON: [{"name": "direct", "argv": ["node", "ts2-server.mjs"], "client": "sdk"}, ...]
// Prints one JSON line: {"name": [latency in microseconds, ...], ...}.
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// What mcp-bridge puts in every request's params (as scripts/bench/node-arms.py).
const BRIDGE_META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-bridge', version: '0.1.0' },
};

/** A JSON-RPC client over the pipes of a child; answers are matched by id. */
class RawClient {
    constructor(argv, modern) {
        this.modern = modern;
        this.nextId = 0;
        this.waiters = new Map();
        this.buf = '';
        this.child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
        this.child.stdout.setEncoding('utf8');
        this.child.stdout.on('data', (chunk) => {
            this.buf += chunk;
            let nl;
            while ((nl = this.buf.indexOf('\n')) >= 0) {
                const line = this.buf.slice(0, nl);
                this.buf = this.buf.slice(nl + 1);
                if (!line.trim()) continue;
                const msg = JSON.parse(line);
                const w = this.waiters.get(msg.id);
                if (w && msg.method === undefined) {
                    this.waiters.delete(msg.id);
                    w(msg);
                }
            }
        });
    }
    send(msg) { this.child.stdin.write(JSON.stringify(msg) + '\n'); }
    request(method, params) {
        const id = ++this.nextId;
        const p = this.modern ? { ...params, _meta: BRIDGE_META } : params;
        return new Promise((resolve, reject) => {
            this.waiters.set(id, (m) => (m.error ? reject(new Error(`${method}: ${JSON.stringify(m.error)}`)) : resolve(m.result)));
            this.send({ jsonrpc: '2.0', id, method, params: p });
        });
    }
    async start() {
        if (this.modern) {
            await this.request('server/discover', {});
            // The bridge opens one listen stream: the TS SDK client declares no listChanged,
            // but the server's tools capability does.
            this.send({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen',
                params: { _meta: BRIDGE_META, notifications: { toolsListChanged: true } } });
        } else {
            await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {},
                clientInfo: { name: 'bench', version: '1' } });
            this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        }
    }
    callTool(args) { return this.request('tools/call', args); }
    close() {
        return new Promise((resolve) => { this.child.on('exit', resolve); this.child.stdin.end(); });
    }
}

const [requests, warmup, batch] = process.argv.slice(2, 5).map(Number);
const paths = JSON.parse(process.argv[5]);
const clients = [];
for (const p of paths) {
    const kind = p.client ?? 'sdk';
    let client;
    if (kind === 'sdk') {
        client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
        const transport = new StdioClientTransport({ command: p.argv[0], args: p.argv.slice(1), stderr: 'ignore', env: { ...process.env } });
        await client.connect(transport);
    } else {
        client = new RawClient(p.argv, kind === 'raw-modern');
        await client.start();
    }
    clients.push({ name: p.name, client, samples: [] });
}
const args = { name: 'echo', arguments: { text: 'hello' } };
const timed = async (c, n, keep) => {
    for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        const r = await c.client.callTool(args);
        const us = Number(process.hrtime.bigint() - t0) / 1000;
        if (r.content?.[0]?.text !== 'hello') throw new Error(`${c.name}: unexpected result ${JSON.stringify(r)}`);
        if (keep) c.samples.push(us);
    }
};
for (const c of clients) await timed(c, warmup, false);
for (let left = requests; left > 0; left -= batch) {
    for (const c of clients) await timed(c, Math.min(batch, left), true);
}
for (const c of clients) await c.client.close();
console.log(JSON.stringify(Object.fromEntries(clients.map(c => [c.name, c.samples]))));
