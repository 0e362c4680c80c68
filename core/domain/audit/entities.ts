// The audit log's one table. The schema is owned by ./migrations/; this definition describes the
// same columns for the ORM's schema knowledge (the log is written and read with SQL: ./record.ts,
// ./service.ts).
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const AuditEventRow = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_events',
  properties: {
    id: p.bigint().primary().autoincrement().generated('identity'),
    at: p.datetime().columnType('timestamptz').defaultRaw('clock_timestamp()'),
    actorId: p.uuid().nullable(),
    actorEmail: p.text().nullable(),
    subjectId: p.uuid().nullable(),
    action: p.text(),
    outcome: p.text().default('success'),
    targetType: p.text().nullable(),
    targetId: p.text().nullable(),
    address: p.text().nullable(),
    userAgent: p.text().nullable(),
    requestId: p.text().nullable(),
    detail: p.json<unknown>().default('{}'),
  },
  indexes: [
    { name: 'audit_events_at_index', properties: ['at'] },
    { name: 'audit_events_actor_index', expression: 'create index audit_events_actor_index on audit_events (actor_id, id)' },
    {
      name: 'audit_events_subject_index',
      expression: 'create index audit_events_subject_index on audit_events (subject_id, id)',
    },
    { name: 'audit_events_action_index', expression: 'create index audit_events_action_index on audit_events (action, id)' },
    {
      name: 'audit_events_target_index',
      expression: 'create index audit_events_target_index on audit_events (target_id, id)',
    },
  ],
});
export type AuditEventRow = InferEntity<typeof AuditEventRow>;

export const auditEntities = [AuditEventRow] as const;
