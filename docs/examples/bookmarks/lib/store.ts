// The bookmark store: one shelf per user, in memory. A helper module, bundled with the plugin.
//
// Everything here lives in this version of the plugin's memory: it is gone after a restart and
// after every hot reload (each version of a plugin is evaluated afresh). Real plugins keep their
// data through the services on `ctx.services`, never in module state.
import { randomUUID } from 'node:crypto';

export interface Bookmark {
  id: string;
  url: string;
  title: string;
  tags: string[];
  added_at: string;
}

export interface NewBookmark {
  url: string;
  title?: string | undefined;
  tags?: string[] | undefined;
}

export class BookmarkStore {
  /** user id -> (bookmark id -> bookmark), in the order they were added. */
  readonly #shelves = new Map<string, Map<string, Bookmark>>();

  #shelf(userId: string): Map<string, Bookmark> {
    let shelf = this.#shelves.get(userId);
    if (!shelf) {
      shelf = new Map();
      this.#shelves.set(userId, shelf);
    }
    return shelf;
  }

  /** Adds a bookmark; a URL the user already has keeps its id and gets the new title and tags. */
  add(userId: string, input: NewBookmark): Bookmark {
    const shelf = this.#shelf(userId);
    const title = input.title?.trim() || input.url;
    const tags = [...new Set(input.tags ?? [])].sort();
    const existing = [...shelf.values()].find((b) => b.url === input.url);
    if (existing) {
      existing.title = title;
      existing.tags = tags;
      return { ...existing };
    }
    const bookmark: Bookmark = { id: randomUUID(), url: input.url, title, tags, added_at: new Date().toISOString() };
    shelf.set(bookmark.id, bookmark);
    return { ...bookmark };
  }

  /** The user's bookmarks, newest first, optionally only those with `tag`. */
  list(userId: string, opts: { tag?: string | undefined; limit: number }): { bookmarks: Bookmark[]; total: number } {
    const all = [...(this.#shelves.get(userId)?.values() ?? [])].reverse();
    const matching = opts.tag === undefined ? all : all.filter((b) => b.tags.includes(opts.tag!));
    return { bookmarks: matching.slice(0, opts.limit).map((b) => ({ ...b })), total: matching.length };
  }

  /** True when the user had a bookmark with this id. Another user's id is simply not found. */
  remove(userId: string, id: string): boolean {
    return this.#shelves.get(userId)?.delete(id) ?? false;
  }

  /** Totals over every user, for operators. */
  stats(): { users: number; bookmarks: number } {
    let users = 0;
    let bookmarks = 0;
    for (const shelf of this.#shelves.values()) {
      if (shelf.size === 0) continue;
      users++;
      bookmarks += shelf.size;
    }
    return { users, bookmarks };
  }
}
