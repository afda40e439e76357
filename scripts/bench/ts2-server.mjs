#!/usr/bin/env node
// A TS SDK v2 server (@modelcontextprotocol/server 2.4.0, dual-era: 2025-11-25 and 2026-07-28)
// on stdio with one tool, echo {text} -> text content <text>, as the upstream of
// `scripts/bench-e2e.py --node`. The SDK does all of the protocol.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

serveStdio(() => {
    const server = new McpServer({ name: 'bench-ts2', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool('echo', { description: 'Echo the text', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] }));
    return server;
});
