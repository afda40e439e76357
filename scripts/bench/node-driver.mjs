#!/usr/bin/env node
// The Node.js side of `scripts/bench-e2e.py --node`: one process holds one TS SDK 1.x client
// (@modelcontextprotocol/sdk 1.32.2, the client of VS Code, revision 2025-11-25) per path and
// times sequential tools/call echo {text: "hello"} on each, interleaved in batches, so the
// machine's noise weighs on every path alike.
//
//   node node-driver.mjs REQUESTS WARMUP BATCH PATHS_JSON
//   PATHS_JSON: [{"name": "direct", "argv": ["node", "ts2-server.mjs"]}, ...]
// Prints one JSON line: {"name": [latency in microseconds, ...], ...}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [requests, warmup, batch] = process.argv.slice(2, 5).map(Number);
const paths = JSON.parse(process.argv[5]);
const clients = [];
for (const p of paths) {
    const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
    const transport = new StdioClientTransport({ command: p.argv[0], args: p.argv.slice(1), stderr: 'ignore', env: { ...process.env } });
    await client.connect(transport);
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
