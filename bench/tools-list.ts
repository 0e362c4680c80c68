// What an MCP client pays to learn Folio's tools: the size of tools/list for an ordinary user
// (the first-party plugins, through the official SDK client), in bytes of JSON per tool, with the
// share of each part (descriptions, input schemas, output schemas, the rest).
//
//   npx node bench/tools-list.ts            PGlite in a temp dir; prints a table and one JSON line
//
// Reference: the reference filesystem MCP server lists about 0.9 KB per tool. Target: <= 1.2 KB
// per tool on average over Folio's own tools.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ADMIN_TOKEN, callFn, createUserToken, startBenchFolio } from './lib.ts';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertNode24, removeDir, tempDir } from './util.ts';

export const TOOLS_LIST_TARGET_BYTES = 1200;

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? null), 'utf8');

export interface ListingSize {
  who: string;
  tools: number;
  bytes: number;
  perTool: number;
  parts: { description: number; inputSchema: number; outputSchema: number; other: number };
}

function measure(who: string, tools: Tool[]): ListingSize {
  const parts = { description: 0, inputSchema: 0, outputSchema: 0, other: 0 };
  for (const t of tools) {
    const { description, inputSchema, outputSchema, ...rest } = t;
    parts.description += bytes(description);
    parts.inputSchema += bytes(inputSchema);
    parts.outputSchema += outputSchema ? bytes(outputSchema) : 0;
    parts.other += bytes(rest);
  }
  const total = bytes({ tools });
  return { who, tools: tools.length, bytes: total, perTool: Math.round(total / Math.max(1, tools.length)), parts };
}

async function listAs(url: string, token: string): Promise<{ tools: Tool[]; instructions: string }> {
  const client = new Client({ name: 'bench-tools-list', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  try {
    const { tools } = await client.listTools();
    return { tools, instructions: client.getInstructions() ?? '' };
  } finally {
    await client.close();
  }
}

const VERBS = ['create', 'list', 'get', 'update', 'delete', 'search', 'export', 'sync'];
const THINGS = ['invoice', 'ticket', 'contact', 'deal', 'sprint', 'recipe', 'flight', 'playlist', 'sensor', 'lesson'];

/** Plugin folders of `n` synthetic namespaces with four functions each, written under `dir`. */
async function syntheticPlugins(dir: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const ns = `synth${String(i).padStart(3, '0')}`;
    const thing = THINGS[i % THINGS.length]!;
    const functions = Object.fromEntries(
      [0, 1, 2, 3].map((k) => {
        const verb = VERBS[(i + k) % VERBS.length]!;
        return [
          `${verb}_${thing}`,
          {
            title: `${verb[0]!.toUpperCase()}${verb.slice(1)} a ${thing}`,
            description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${thing}s in the ${ns} service (an example third-party integration).`,
            annotations: { readOnlyHint: verb === 'list' || verb === 'get' || verb === 'search' },
            args: {
              type: 'object',
              properties: {
                id: { type: 'string', description: `The ${thing} id.` },
                note: { type: 'string', maxLength: 500, description: 'Free text.' },
              },
            },
            handler: 'HANDLER',
          },
        ];
      }),
    );
    const source = `export default ${JSON.stringify({ namespace: ns, description: `A ${thing} service.`, functions }, null, 1).replaceAll('"HANDLER"', '() => ({ ok: true })')};\n`;
    await mkdir(path.join(dir, ns), { recursive: true });
    await writeFile(path.join(dir, ns, 'index.mjs'), source);
  }
}

/**
 * With 100 third-party plugins installed: the listing as it is, the listing once the user pinned
 * the namespaces they use, and what finding a tool on demand costs instead (folio.find_tools).
 */
export async function runLargeCatalogue(
  n = 100,
): Promise<{ plugins: number; all: ListingSize; pinned: ListingSize; findBytes: number; findTools: number }> {
  const dir = await tempDir('folio-bench-catalogue-');
  await syntheticPlugins(dir, n);
  const folio = await startBenchFolio({ plugins: [dir], watch: false });
  try {
    const user = await createUserToken(folio.url);
    const all = await listAs(folio.url, user.token);
    const pin = await callFn(folio.url, user.token, 'folio', 'pin', { namespaces: ['notetaker', 'search'] });
    if (pin.status !== 200) throw new Error(`folio.pin answered ${pin.status}`);
    const pinned = await listAs(folio.url, user.token);
    const found = await callFn(folio.url, user.token, 'folio', 'find_tools', { query: 'export an invoice', limit: 5 });
    if (found.status !== 200) throw new Error(`folio.find_tools answered ${found.status}`);
    const body = JSON.parse(found.text) as { tools: unknown[] };
    return {
      plugins: n,
      all: measure(`${n} more plugins, nothing pinned`, all.tools),
      pinned: measure('pinned: notetaker, search', pinned.tools),
      findBytes: Buffer.byteLength(found.text, 'utf8'),
      findTools: body.tools.length,
    };
  } finally {
    await folio.close();
    await removeDir(dir);
  }
}

export async function runToolsList(): Promise<{ sizes: ListingSize[]; instructionsBytes: number }> {
  const folio = await startBenchFolio({ plugins: [], watch: false });
  try {
    const user = await createUserToken(folio.url);
    const plain = await listAs(folio.url, user.token);
    // The same user once they keep meeting notes: the meetings namespace appears.
    const note = await callFn(folio.url, user.token, 'notetaker', 'create', { title: 'Standup', body: '- [ ] x', tags: ['meeting'] });
    if (note.status !== 200) throw new Error(`notetaker.create answered ${note.status}`);
    const withMeetings = await listAs(folio.url, user.token);
    const admin = await listAs(folio.url, ADMIN_TOKEN);
    return {
      sizes: [
        measure('ordinary user', plain.tools),
        measure('ordinary user with a meeting note', withMeetings.tools),
        measure('admin', admin.tools),
      ],
      instructionsBytes: Buffer.byteLength(plain.instructions, 'utf8'),
    };
  } finally {
    await folio.close();
  }
}

if (import.meta.main) {
  assertNode24();
  const r = await runToolsList();
  const rows = r.sizes.map(
    (s) =>
      `${s.who.padEnd(36)} ${String(s.tools).padStart(5)} ${String(s.bytes).padStart(8)} ${String(s.perTool).padStart(8)}   ` +
      `desc ${s.parts.description}, input ${s.parts.inputSchema}, output ${s.parts.outputSchema}, other ${s.parts.other}`,
  );
  process.stdout.write(
    [`${'caller'.padEnd(36)} ${'tools'.padStart(5)} ${'bytes'.padStart(8)} ${'B/tool'.padStart(8)}`, ...rows].join('\n') +
      `\nserver instructions (sent once per session): ${r.instructionsBytes} bytes` +
      `\ntarget: <= ${TOOLS_LIST_TARGET_BYTES} B/tool for an ordinary user: ${r.sizes[0]!.perTool <= TOOLS_LIST_TARGET_BYTES ? 'PASS' : 'FAIL'}\n` +
      JSON.stringify(r) +
      '\n',
  );
  const big = await runLargeCatalogue(100);
  process.stdout.write(
    `\nwith ${big.plugins} synthetic plugins (4 tools each) installed, for an ordinary user:\n` +
      `  tools/list, nothing pinned:     ${big.all.tools} tools, ${big.all.bytes} bytes (${big.all.perTool} B/tool)\n` +
      `  tools/list, pinned 2 namespaces: ${big.pinned.tools} tools, ${big.pinned.bytes} bytes\n` +
      `  folio.find_tools "export an invoice" (5 with schemas): ${big.findBytes} bytes\n` +
      JSON.stringify({ largeCatalogue: big }) +
      '\n',
  );
}
