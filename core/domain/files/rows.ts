// Rows as the SQL of the files domain selects them, and their mapping to the wire shapes. Times are
// selected as epoch milliseconds and shown as ISO 8601 UTC strings.
import type { FileMeta, FileVersion, ShareLink, VersionChange } from './types.ts';

export const ms = (col: string, as: string) => `(extract(epoch from ${col}) * 1000)::float8 as ${as}`;
/** The database clock, to the millisecond: what every write stamps. */
export const NOW_MS = `date_trunc('milliseconds', clock_timestamp())`;
const iso = (v: number) => new Date(v).toISOString();
const isoOrNull = (v: number | null) => (v === null ? null : iso(v));

export interface FileDbRow {
  id: string;
  name: string;
  folder: string;
  content_type: string;
  size: string | number;
  sha256: string;
  version: number;
  note_id: string | null;
  created_ms: number;
  updated_ms: number;
  deleted_ms: number | null;
}

export const FILE_COLUMNS = `id, name, folder, content_type, size, sha256, version, note_id, ${ms('created_at', 'created_ms')}, ${ms('updated_at', 'updated_ms')}, ${ms('deleted_at', 'deleted_ms')}`;

export function toFile(r: FileDbRow): FileMeta {
  return {
    id: r.id,
    name: r.name,
    folder: r.folder,
    content_type: r.content_type,
    size: Number(r.size),
    sha256: r.sha256,
    version: r.version,
    note_id: r.note_id,
    created_at: iso(r.created_ms),
    updated_at: iso(r.updated_ms),
    deleted_at: isoOrNull(r.deleted_ms),
  };
}

export interface VersionDbRow {
  file_id: string;
  version: number;
  name: string;
  content_type: string;
  size: string | number;
  sha256: string;
  change: VersionChange;
  created_ms: number;
}

export const VERSION_COLUMNS = `file_id, version, name, content_type, size, sha256, change, ${ms('created_at', 'created_ms')}`;

export function toVersion(r: VersionDbRow): FileVersion {
  return {
    file_id: r.file_id,
    version: r.version,
    name: r.name,
    content_type: r.content_type,
    size: Number(r.size),
    sha256: r.sha256,
    change: r.change,
    created_at: iso(r.created_ms),
  };
}

export interface ShareDbRow {
  id: string;
  file_id: string;
  file_name: string;
  version: number | null;
  label: string;
  has_password: boolean;
  expires_ms: number | null;
  max_downloads: number | null;
  downloads: number;
  last_access_ms: number | null;
  created_ms: number;
  now_ms: number;
}

export const SHARE_COLUMNS = `s.id, s.file_id, f.name as file_name, s.version, s.label, s.password_hash is not null as has_password,
  ${ms('s.expires_at', 'expires_ms')}, s.max_downloads, s.downloads, ${ms('s.last_access_at', 'last_access_ms')},
  ${ms('s.created_at', 'created_ms')}, ${ms('now()', 'now_ms')}`;

export function toShare(r: ShareDbRow): ShareLink {
  const state =
    r.expires_ms !== null && r.expires_ms <= r.now_ms
      ? 'expired'
      : r.max_downloads !== null && r.downloads >= r.max_downloads
        ? 'exhausted'
        : 'active';
  return {
    id: r.id,
    file_id: r.file_id,
    file_name: r.file_name,
    version: r.version,
    label: r.label,
    has_password: r.has_password,
    expires_at: isoOrNull(r.expires_ms),
    max_downloads: r.max_downloads,
    downloads: r.downloads,
    last_access_at: isoOrNull(r.last_access_ms),
    created_at: iso(r.created_ms),
    state,
  };
}
