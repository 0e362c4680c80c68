// The storage_usage table. The schema is owned by ./migrations/; this definition describes the same
// columns for the ORM's schema knowledge. core/domain/storage/usage.ts writes it with SQL.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from '../identity/entities.ts';

export const StorageUsageRow = defineEntity({
  name: 'StorageUsage',
  tableName: 'storage_usage',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade'),
    kind: p.text().primary(),
    bytes: p.bigint('number').defaultRaw('0'),
    updatedAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
  },
  primaryKeys: ['owner', 'kind'],
  checks: [
    { name: 'storage_usage_bytes_check', expression: 'bytes >= 0' },
    { name: 'storage_usage_kind_check', expression: "kind ~ '^[a-z][a-z0-9_]{0,31}$'" },
  ],
});
export type StorageUsageRow = InferEntity<typeof StorageUsageRow>;

export const storageEntities = [StorageUsageRow] as const;
