// The MCP session's event store: every SSE event gets an id, a reconnecting client gets the events of
// its stream after the id it names, and the store stays within its bounds by forgetting the oldest.
import t from 'tap';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SessionEventStore } from '../../core/surfaces/mcp/event-store.ts';

const answer = (id: number, text = 'x'): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

async function replay(store: SessionEventStore, after: string): Promise<Array<[string, JSONRPCMessage]>> {
  const out: Array<[string, JSONRPCMessage]> = [];
  await store.replayEventsAfter(after, {
    send: async (id, m) => {
      out.push([id, m]);
    },
  });
  return out;
}

t.test('replays only the events after the id, of the same stream, without the priming event', async (t) => {
  const store = new SessionEventStore();
  const prime = await store.storeEvent('a', {} as JSONRPCMessage);
  const first = await store.storeEvent('a', answer(1));
  await store.storeEvent('b', answer(2));
  const third = await store.storeEvent('a', answer(3));
  t.same(await replay(store, prime), [
    [first, answer(1)],
    [third, answer(3)],
  ]);
  t.same(await replay(store, first), [[third, answer(3)]]);
  t.equal(await store.getStreamIdForEventId(third), 'a');
  t.equal(await store.getStreamIdForEventId('999'), undefined, 'an id never given');
  await t.rejects(replay(store, '999'), /unknown event id/);
});

t.test('at most maxEvents: the oldest go first, ids keep growing', async (t) => {
  const store = new SessionEventStore({ maxEvents: 3, maxBytes: 1e9 });
  const ids: string[] = [];
  for (let i = 0; i < 5000; i++) ids.push(await store.storeEvent('s', answer(i)));
  t.equal(store.size, 3);
  t.equal(new Set(ids).size, ids.length, 'every id is new');
  t.equal(await store.getStreamIdForEventId(ids[4996]!), undefined, 'an evicted event is forgotten');
  t.same(
    (await replay(store, ids[4997]!)).map(([id]) => id),
    [ids[4998], ids[4999]],
  );
});

t.test('at most maxBytes, but the newest event is always kept', async (t) => {
  const store = new SessionEventStore({ maxEvents: 1000, maxBytes: 200 });
  const small: string[] = [];
  for (let i = 0; i < 4; i++) small.push(await store.storeEvent('s', answer(i)));
  t.equal(store.size, 2, 'events of ~70 bytes: two fit in 200');
  const big = await store.storeEvent('s', answer(9, 'y'.repeat(1000)));
  t.equal(store.size, 1, 'an event over the bound evicts all older ones');
  t.equal(await store.getStreamIdForEventId(big), 's', 'and is kept itself');
  await store.storeEvent('s', answer(10));
  t.equal(store.size, 1, 'the big one goes when the next one comes');
});
