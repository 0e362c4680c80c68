// The transcriptions table. The schema is owned by ./migrations/; this definition describes the
// same columns (the service writes with SQL, scoped by owner), for the ORM's schema knowledge.
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from '../identity/entities.ts';

export const TranscriptionRow = defineEntity({
  name: 'Transcription',
  tableName: 'transcriptions',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    fileId: p.uuid(),
    fileVersion: p.integer(),
    status: p.text().default('queued'),
    progress: p.integer().default(0),
    engine: p.text(),
    model: p.text().nullable(),
    language: p.text().nullable(),
    tags: p.array().columnType('text[]').default([]),
    toNote: p.boolean().default(true),
    noteId: p.uuid().nullable(),
    error: p.text().nullable(),
    duration: p.double().nullable(),
    result: p.json<unknown>().nullable(),
    jobId: p.text().nullable(),
    attempt: p.integer().default(0),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    startedAt: p.datetime().columnType('timestamptz').nullable(),
    finishedAt: p.datetime().columnType('timestamptz').nullable(),
  },
  indexes: [
    {
      name: 'transcriptions_owner_created_index',
      expression: 'create index transcriptions_owner_created_index on transcriptions (owner_id, created_at desc, id desc)',
    },
  ],
});
export type TranscriptionRow = InferEntity<typeof TranscriptionRow>;

export const transcribeEntities = [TranscriptionRow] as const;
