// The exchange tables. The schema is owned by ./migrations/; these definitions describe the same
// columns (the service writes with SQL, scoped by owner), for the ORM's schema knowledge.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from '../identity/entities.ts';

export const ExchangeJobRow = defineEntity({
  name: 'ExchangeJob',
  tableName: 'exchange_jobs',
  properties: {
    id: p.uuid().primary(),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    kind: p.text(),
    status: p.text().default('queued'),
    progress: p.integer().default(0),
    options: p.json<unknown>().default('{}'),
    archive: p.text().nullable(),
    size: p.bigint().nullable(),
    counts: p.json<unknown>().default('{}'),
    report: p.json<unknown>().nullable(),
    error: p.text().nullable(),
    jobId: p.text().nullable(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    finishedAt: p.datetime().columnType('timestamptz').nullable(),
    expiresAt: p.datetime().columnType('timestamptz'),
  },
  indexes: [
    {
      name: 'exchange_jobs_owner_created_index',
      expression: 'create index exchange_jobs_owner_created_index on exchange_jobs (owner_id, created_at desc, id desc)',
    },
    { name: 'exchange_jobs_expires_index', properties: ['expiresAt'] },
  ],
});
export type ExchangeJobRow = InferEntity<typeof ExchangeJobRow>;

export const ExchangeImportedRow = defineEntity({
  name: 'ExchangeImported',
  tableName: 'exchange_imported',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade').primary(),
    contentHash: p.text().primary(),
    kind: p.text(),
    objectId: p.uuid(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
  },
});
export type ExchangeImportedRow = InferEntity<typeof ExchangeImportedRow>;

export const exchangeEntities = [ExchangeJobRow, ExchangeImportedRow] as const;
