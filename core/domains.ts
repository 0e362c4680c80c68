// The one list of domains. Each is a folder under core/domain/ exporting one registration
// (core/contract/domain.ts): its tables and migrations, its service, its token scopes, its REST
// group and the namespace that governs it. Adding a domain is adding it here.
import type { MigrationObject } from '@mikro-orm/core';
import type { Domain } from './contract/domain.ts';
import { JOB_QUEUE_MIGRATION } from './db/job-queue-migration.ts';
import { McpStreamEvent, STREAM_LOG_MIGRATION } from './db/stream-log.ts';
import { identityDomain } from './domain/identity/index.ts';
import { notesDomain } from './domain/notes/index.ts';
import { storageDomain } from './domain/storage/index.ts';
import { filesDomain } from './domain/files/index.ts';
import { transcribeDomain } from './domain/transcribe/index.ts';
import { searchDomain } from './domain/search/index.ts';
import { exchangeDomain } from './domain/exchange/index.ts';
import { auditDomain } from './domain/audit/index.ts';

export const DOMAINS = [
  identityDomain,
  storageDomain,
  notesDomain,
  filesDomain,
  transcribeDomain,
  searchDomain,
  exchangeDomain,
  auditDomain,
] as const satisfies readonly Domain<any, any>[];

/** Every entity and every migration (in name order; with the job queue's and the MCP stream log's tables), for the database layer. */
export const DATABASE_SCHEMA: { entities: readonly unknown[]; migrations: MigrationObject[] } = {
  entities: [...DOMAINS.flatMap((d) => d.entities), McpStreamEvent],
  migrations: [...DOMAINS.flatMap((d) => d.migrations), JOB_QUEUE_MIGRATION, STREAM_LOG_MIGRATION].sort((a, b) =>
    a.name.localeCompare(b.name),
  ),
};
