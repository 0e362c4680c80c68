// The log of tool calls: written in batches off the call's path, one write at a time; close writes
// every call kept (including batches already on their way) and takes no more; a full buffer drops
// and counts instead of growing. Against a real database, on both engines.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { AuditService, CALL_BUFFER_MAX, type ToolCall } from '../../core/domain/audit/service.ts';
import { openTestDatabase, testLogger } from '../helpers/db.ts';

const db = await openTestDatabase();
t.teardown(() => db.cleanup());

const user = { id: randomUUID(), email: 'caller@example.com', name: null, roles: [] };
const call = (fn: string): ToolCall => ({
  principal: { user, scopes: [], tokenKind: 'api', tokenId: randomUUID(), tokenExpiresAt: null },
  surface: 'curl',
  namespace: 'notes',
  fn,
  outcome: 'ok',
  status: 200,
  durationMs: 1.5,
  argumentBytes: 10,
  resultBytes: 20,
});
const written = async (fn: string) =>
  Number(
    (
      await db.orm.em
        .fork()
        .execute<Array<{ n: string }>>(`select count(*) as n from audit_events where action = 'tool.called' and target_id = ?`, [
          `notes.${fn}`,
        ])
    )[0]!.n,
  );

t.test('close writes every call kept, the batches already on their way too, and takes no more', async (t) => {
  const audit = new AuditService(db.orm, { retentionDays: 30, toolCalls: true }, testLogger());
  // 450 calls: two full batches start writing on their own, 50 wait for the timer.
  for (let i = 0; i < 450; i++) audit.recordCall(call('shutdown'));
  await audit.close();
  t.equal(await written('shutdown'), 450, 'every call is written when close resolves');
  audit.recordCall(call('shutdown'));
  await audit.flush();
  t.equal(await written('shutdown'), 450, 'a call after close is not written');
  t.equal(audit.droppedCalls, 1, 'and is counted as dropped');
});

t.test('a full buffer drops the calls beyond it and counts them', async (t) => {
  const audit = new AuditService(db.orm, { retentionDays: 30, toolCalls: true }, testLogger());
  // All at once: no write can take any before the buffer is full.
  for (let i = 0; i < CALL_BUFFER_MAX + 3; i++) audit.recordCall(call('flood'));
  t.equal(audit.droppedCalls, 3);
  await audit.close();
  t.equal(await written('flood'), CALL_BUFFER_MAX, 'the calls kept are all written');
});
