// The files domain's contract: what the filedb REST group and the files plugin build on. Every
// method takes the acting principal and is scoped to what it owns: another user's file, version or
// share link is NotFound, by construction (the owner is part of every query's WHERE).
import type { Readable } from 'node:stream';
import type { Principal } from '../identity/types.ts';
import type { Page } from '../notes/types.ts';

export type { Page };

/** A file as every surface shows it (JSON field names are the wire names): its current version. */
export interface FileMeta {
  id: string;
  name: string;
  /** Optional folder path ('' for none), e.g. 'projects/2026'. */
  folder: string;
  /** Sniffed from the bytes (file-type), else the declared type, else guessed from the name. */
  content_type: string;
  size: number;
  sha256: string;
  /** 1 on the first upload; every new content (an upload or a restore) increments it. */
  version: number;
  /** The note this file is attached to, if any. */
  note_id: string | null;
  created_at: string;
  updated_at: string;
  /** Set while the file is in the trash. */
  deleted_at: string | null;
}

export type VersionChange = 'upload' | 'restore';

export interface FileVersion {
  file_id: string;
  version: number;
  name: string;
  content_type: string;
  size: number;
  sha256: string;
  change: VersionChange;
  created_at: string;
}

/** Bytes arriving for a new file or a new version. */
export interface Upload {
  source: Readable;
  /** The Content-Type the client declared, if any: the fallback when the bytes say nothing. */
  declaredType?: string | undefined;
  /** Content-Length when the client declared one: a file over a limit is refused before reading. */
  length?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface CreateFile extends Upload {
  name: string;
  folder?: string | undefined;
  note_id?: string | undefined;
}

export interface ListFilesOptions {
  limit?: number;
  cursor?: string;
  trashed?: boolean;
  /** Only files in this folder (exactly). */
  folder?: string;
  /** Only files whose id starts with this (the short ids lists print). */
  idPrefix?: string;
}

/** What to read: a file's current version or one of its versions, and which bytes. */
export interface ContentRef {
  file_id: string;
  version: number;
  name: string;
  content_type: string;
  size: number;
  sha256: string;
}

/** A version's extracted text, as the files-extract-text job stored it (for search and for reading). */
export interface FileText {
  file_id: string;
  version: number;
  /**
   * 'pending' until the job has run; 'skipped' when there is no text to extract (`note` says why);
   * 'failed' when extracting it went over the extractor's memory or time limit (`note` says which).
   */
  state: 'pending' | 'extracted' | 'skipped' | 'failed';
  /** Why it was skipped or failed, or 'truncated' when the text was cut at the extraction cap. */
  note: string | null;
  /** A PDF's page count; 0 for other types. */
  pages: number;
  /** The page `text` is, when one page was asked for. */
  page: number | null;
  /** The whole text (PDF pages joined by a blank line), or that one page; '' unless extracted. */
  text: string;
}

export interface ShareLink {
  id: string;
  file_id: string;
  file_name: string;
  /** The version the link serves; null: always the file's current version. */
  version: number | null;
  label: string;
  has_password: boolean;
  expires_at: string | null;
  max_downloads: number | null;
  downloads: number;
  last_access_at: string | null;
  created_at: string;
  /** 'active', or why the link no longer answers: 'expired', 'exhausted'. */
  state: 'active' | 'expired' | 'exhausted';
}

export interface CreateShare {
  expires_in_seconds?: number | undefined;
  password?: string | undefined;
  max_downloads?: number | undefined;
  version?: number | undefined;
  label?: string | undefined;
}

/** A new link: the token appears here once and is never stored. */
export type CreatedShare = ShareLink & { token: string };

/** Who opens a public link, for the wrong-password throttle. */
export interface ShareClient {
  /** The client's address. */
  key: string;
}

export interface FilesService {
  create(p: Principal, input: CreateFile): Promise<FileMeta>;
  /** A new version of the file's content; `expectedVersion` must be the current one (else Conflict). */
  putContent(p: Principal, id: string, expectedVersion: number, upload: Upload): Promise<FileMeta>;
  list(p: Principal, opts?: ListFilesOptions): Promise<Page<FileMeta>>;
  get(p: Principal, id: string): Promise<FileMeta>;
  versions(p: Principal, id: string): Promise<FileVersion[]>;
  /** The current content (no version) or that version's. A trashed file's content is still readable. */
  content(p: Principal, id: string, version?: number): Promise<ContentRef>;
  /**
   * The extracted text of the current version (or `version`), whole or one PDF page. What search
   * and the surfaces read; a trashed file's text stays readable to its owner, like its bytes.
   */
  text(p: Principal, id: string, opts?: { version?: number; page?: number }): Promise<FileText>;
  /** The bytes of `ref`, or a range of them (inclusive). */
  read(ref: ContentRef, range?: { start: number; end: number }): Promise<Readable>;
  restoreVersion(p: Principal, id: string, version: number, expectedVersion?: number): Promise<FileMeta>;
  rename(p: Principal, id: string, input: { name?: string; folder?: string }): Promise<FileMeta>;
  trash(p: Principal, id: string): Promise<FileMeta>;
  untrash(p: Principal, id: string): Promise<FileMeta>;
  purge(p: Principal, id: string): Promise<void>;
  /** Attaches the file to one of the caller's notes (null: detaches it). */
  attach(p: Principal, id: string, noteId: string | null): Promise<FileMeta>;
  /** The live files attached to one of the caller's notes. */
  attachments(p: Principal, noteId: string): Promise<FileMeta[]>;
  createShare(p: Principal, fileId: string, input: CreateShare): Promise<CreatedShare>;
  listShares(p: Principal, opts?: { file_id?: string }): Promise<ShareLink[]>;
  revokeShare(p: Principal, shareId: string): Promise<void>;
}
