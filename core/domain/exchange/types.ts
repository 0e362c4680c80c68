// The exchange domain's contract: export and import jobs as every surface shows them.

/** The config's `exchange` section. */
export interface ExchangeSettings {
  /** The largest archive an import takes (the upload is refused past it: 413 payload_too_large). */
  maxImportBytes: number;
  /** Entries one archive may hold; more refuses the whole import. */
  maxEntries: number;
  /** Bytes one member may inflate to (declared, and as it actually inflates). */
  maxMemberBytes: number;
  /** Bytes all members of one archive may inflate to. */
  maxTotalBytes: number;
  /** How long a finished job, its export archive and its report are kept. */
  keepHours: number;
  /** Export and import jobs one user may have queued or running at once. */
  maxQueuedPerUser: number;
}

export type ExchangeKind = 'export' | 'import';
export type ExchangeStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface ReportEntry {
  /** The path in the archive. */
  path: string;
  kind: 'note' | 'file' | 'other';
  status: 'imported' | 'skipped' | 'failed';
  /** The note or file it is (imported), or matched (skipped). */
  id?: string;
  /** Why it was skipped or failed, or what was not resolved in it. */
  reason?: string;
}

export interface ExchangeCounts {
  notes?: number;
  files?: number;
  revisions?: number;
  imported?: number;
  skipped?: number;
  failed?: number;
}

export interface ExchangeJob {
  id: string;
  kind: ExchangeKind;
  status: ExchangeStatus;
  progress: number;
  options: { revisions?: boolean; files?: boolean };
  counts: ExchangeCounts;
  /** The export archive's size in bytes, once written; the uploaded archive's for an import. */
  size: number | null;
  error: string | null;
  /** An import's per-file report, once it has run. */
  report?: ReportEntry[];
  created_at: string;
  finished_at: string | null;
  expires_at: string;
}

/** The manifest.json at the root of every export. */
export interface Manifest {
  format: 'folio-export';
  format_version: 1;
  folio_version: string;
  user: { id: string; email: string };
  exported_at: string;
  counts: { notes: number; files: number; revisions: number };
  entries: Array<{
    path: string;
    kind: 'note' | 'attachment' | 'file' | 'revision';
    id: string;
    note_id?: string;
    /** A file's folder and name in Folio (its path in the zip may differ): an import restores them. */
    folder?: string;
    name?: string;
    sha256: string;
    size: number;
  }>;
}
