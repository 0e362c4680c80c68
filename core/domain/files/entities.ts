// Files tables. The schema is owned by ./migrations/ (files, file_text, then file_uploads); these
// definitions describe the same columns. The service writes with SQL (row locks, quota charges in
// the same transaction), so the entities are for the ORM's schema knowledge.
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from '../identity/entities.ts';
import { Note } from '../notes/entities.ts';

export const FileRow = defineEntity({
  name: 'File',
  tableName: 'files',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    name: p.text(),
    folder: p.text().default(''),
    contentType: p.text(),
    size: p.bigint('number'),
    sha256: p.text().index('files_sha256_index'),
    version: p.integer().default(1),
    note: p.manyToOne(Note).fieldName('note_id').nullable().deleteRule('set null'),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    updatedAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    deletedAt: p.datetime().columnType('timestamptz').nullable(),
  },
  indexes: [
    {
      name: 'files_live_list_index',
      expression: 'create index files_live_list_index on files (owner_id, updated_at desc, id desc) where deleted_at is null',
    },
    {
      name: 'files_trash_list_index',
      expression: 'create index files_trash_list_index on files (owner_id, updated_at desc, id desc) where deleted_at is not null',
    },
    { name: 'files_note_index', expression: 'create index files_note_index on files (note_id) where note_id is not null' },
  ],
});
export type FileRow = InferEntity<typeof FileRow>;

export const FileVersionRow = defineEntity({
  name: 'FileVersion',
  tableName: 'file_versions',
  properties: {
    file: p.manyToOne(FileRow).fieldName('file_id').primary().deleteRule('cascade'),
    version: p.integer().primary(),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    name: p.text(),
    contentType: p.text(),
    size: p.bigint('number'),
    sha256: p.text().index('file_versions_sha256_index'),
    change: p.text(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    extractionState: p.text().default('pending'),
    extractionNote: p.text().nullable(),
    extractedText: p.text().nullable(),
    extractedPages: p.json<string[]>().nullable(),
  },
  primaryKeys: ['file', 'version'],
});
export type FileVersionRow = InferEntity<typeof FileVersionRow>;

export const FileShareRow = defineEntity({
  name: 'FileShare',
  tableName: 'file_shares',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    file: p.manyToOne(FileRow).fieldName('file_id').deleteRule('cascade'),
    version: p.integer().nullable(),
    tokenHash: p.text().unique('file_shares_token_hash_unique'),
    label: p.text().default(''),
    passwordHash: p.text().nullable(),
    expiresAt: p.datetime().columnType('timestamptz').nullable(),
    maxDownloads: p.integer().nullable(),
    downloads: p.integer().default(0),
    lastAccessAt: p.datetime().columnType('timestamptz').nullable(),
    revokedAt: p.datetime().columnType('timestamptz').nullable(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
  },
  indexes: [
    { name: 'file_shares_owner_index', expression: 'create index file_shares_owner_index on file_shares (owner_id, created_at desc)' },
  ],
});
export type FileShareRow = InferEntity<typeof FileShareRow>;

/** A resumable upload in progress and the quota it holds (see core/domain/files/uploads.ts). */
export const FileUploadRow = defineEntity({
  name: 'FileUpload',
  tableName: 'file_uploads',
  properties: {
    id: p.uuid().primary(),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade').index('file_uploads_owner_id_index'),
    length: p.bigint('number'),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
  },
  checks: [{ name: 'file_uploads_length_check', expression: 'length >= 0' }],
});
export type FileUploadRow = InferEntity<typeof FileUploadRow>;

export const filesEntities = [FileRow, FileVersionRow, FileShareRow, FileUploadRow] as const;
