// Storage accounting as one registration: the table that counts each user's bytes per kind. Other
// domains charge it through ./usage.ts with the `storage` section of the config, which the host
// hands every domain (DomainEnv.storage).
import { defineDomain } from '../../contract/domain.ts';
import { storageEntities } from './entities.ts';
import { Migration20261123000000_storage_usage } from './migrations/Migration20261123000000_storage_usage.ts';
import type { StorageSettings } from '../../contract/domain.ts';

export const storageDomain = defineDomain<StorageSettings, StorageSettings>({
  name: 'storage',
  entities: storageEntities,
  migrations: [{ name: 'Migration20261123000000_storage_usage', class: Migration20261123000000_storage_usage }],
  create: ({ settings }) => settings,
});
