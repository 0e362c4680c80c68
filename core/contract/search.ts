// What global search (core/domain/search) needs from the domains whose resources it indexes, and
// how they tell it that something changed. A domain whose resources have text registers a source in
// its registration (`Domain.search`); search never names notes, files or transcripts itself.
import type { EntityManager } from '@mikro-orm/postgresql';

/** Where in a resource a piece of its text is: the page of a PDF, a transcript segment's start, a note's heading. */
export interface SearchLocation {
  page?: number;
  start_seconds?: number;
  heading?: string;
}

/** A resource as it is to be searched now. */
export interface SearchDocument {
  title: string;
  tags: string[];
  updatedAt: Date;
  /** A file's content type, for the file-type filter; null for other kinds. */
  contentType: string | null;
  /** Its text in reading order, each part with where it is (pages, segments, sections). */
  parts: Array<{ text: string; where?: SearchLocation }>;
}

export interface SearchSource {
  /** What a hit of this source is called: 'note', 'file', 'transcript'. Lower case, unique. */
  kind: string;
  /** The namespace whose policy governs these resources (hidden for a caller: no hits of this kind). */
  namespace: string;
  /** The scope a token needs to read them (without it: no hits of this kind). */
  scope: string;
  /** The resource's path on the REST API, relative to /api/v1. */
  link(id: string): string;
  /**
   * The resource as it should be found now, read in the indexer's transaction (`em`), scoped by
   * its owner; null when it must not be found (trashed, purged, not finished).
   */
  load(em: EntityManager, owner: string, id: string): Promise<SearchDocument | null>;
  /** A page of every live resource of this kind (all users), ordered by id, for a rebuild. */
  all(em: EntityManager, after: string | null, limit: number): Promise<Array<{ owner: string; id: string }>>;
  /** How many there are (for a rebuild's progress). */
  count(em: EntityManager): Promise<number>;
}

/** A resource that changed: search looks at it again. */
export interface ResourceChange {
  kind: string;
  /**
   * The id of the user who owns the resource. It must be an existing user: search marks the change
   * as waiting in the writer's transaction (a row referencing users), so a change whose owner is not
   * a user fails the write itself, not only its indexing.
   */
  owner: string;
  id: string;
}

export type ResourceListener = (em: EntityManager, changes: ResourceChange[]) => Promise<void>;

/**
 * Changes of resources, told inside the writer's transaction, so a listener's own writes (search
 * queues its indexing job) commit or roll back with the change.
 */
export class ResourceEvents {
  readonly #listeners: ResourceListener[] = [];

  /** A domain listens to the changes of the domains made before it. */
  listen(listener: ResourceListener): void {
    this.#listeners.push(listener);
  }

  /** Tells every listener, in `em`'s transaction. */
  async changed(em: EntityManager, changes: ResourceChange[]): Promise<void> {
    if (changes.length === 0) return;
    for (const l of this.#listeners) await l(em, changes);
  }
}
