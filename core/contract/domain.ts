// What a domain hands the kernel: one object with everything central needs to know about it.
// Adding a domain (files, transcription, search, ...) is a folder under core/domain/ that exports
// one of these, and one line in core/domains.ts; nothing else central changes.
import type { Logger } from 'pino';
import type { TSchema } from 'typebox';
import type { MigrationObject } from '@mikro-orm/core';
import type { Database } from '../db/database.ts';
import type { ChangeFeed } from '../db/change-feed.ts';
import type { JobQueue } from '../db/jobs.ts';
import type { Principal } from '../domain/identity/types.ts';
import type { PublicRoute, Route } from './rest.ts';
import type { ResourceEvents, SearchSource } from './search.ts';

/** The config's `storage` section: one per-user quota over every kind of stored bytes. */
export interface StorageSettings {
  /** Bytes one user may store in all (note revisions, files, ...); null: no limit. */
  quotaBytesPerUser: number | null;
}

/**
 * What a domain's service factory gets. `settings` is the domain's own section of the config;
 * `storage` the shared quota, which a domain that stores a user's bytes charges through
 * core/domain/storage/usage.ts. `jobs` is the background queue: a domain defines its kinds of job
 * (`jobs.define`) when its service is made, and enqueues them (`jobs.send`, in its own transaction).
 */
export interface DomainEnv<Settings = unknown> {
  db: Database;
  feed: ChangeFeed;
  jobs: JobQueue;
  log: Logger;
  settings: Settings;
  storage: StorageSettings;
  /** The scope catalogue of every domain, for a domain that hands out tokens. */
  scopes: ScopeRules;
  /** The data directory (DATA_DIR), for what a domain keeps on disk (file blobs). */
  dataDir: string;
  /** The server's public base URL (publicUrl, else the address it listens on), once it listens. */
  publicUrl: () => string;
  /**
   * The service of a domain listed before this one in core/domains.ts (a domain builds on those:
   * transcription reads files and writes notes through their services, with their rules).
   */
  domain<T>(name: string): T;
  /** Tell it when a resource with text changes (in the writing transaction); search listens. */
  events: ResourceEvents;
  /** The search sources every domain registered (`Domain.search`), for the search domain. */
  searchSources: () => SearchSource[];
}

/**
 * A token scope a domain defines. A scope may imply others: holding it grants them too. A scope
 * with `roles` works only for a user who has every one of them: a token never grants more than its
 * user has, even when the user loses a role after the token was made.
 */
export interface ScopeDefinition {
  description: string;
  implies?: string[];
  roles?: string[];
}

/** The scope catalogue as the kernel keeps it (core/kernel/scopes.ts). */
export interface ScopeRules {
  /** Every scope with its description, what it implies and the roles it needs, in name order. */
  list(): Array<{ scope: string; description: string; implies: string[]; roles: string[] }>;
  /** Is this a scope a token may carry: a catalogued one, '*', or '<prefix>:*' over catalogued ones? */
  known(scope: string): boolean;
  /** Does holding `granted`, as a user with `roles`, allow `wanted`? Without roles: the token's scopes alone. */
  allows(granted: readonly string[], wanted: string, roles?: readonly string[]): boolean;
  /** The scopes as granted: each with everything it implies. */
  expand(scopes: readonly string[]): string[];
}

/** The domain's REST group: its routes under /api/v1 and the namespace whose policy governs them. */
export interface RestGroup<Service> {
  /** The OpenAPI tag, and the first path segment of every route ('/notetaker/...'). */
  tag: string;
  description: string;
  /**
   * The registry namespace this group belongs to: a caller for whom the namespace is hidden (an
   * operator's switch, its `visible` rule) gets 404 for the whole group, as for an unknown route.
   */
  namespace: string;
  routes(service: Service): Route[];
  /** Schemas named in the OpenAPI document's components. */
  components?: Record<string, TSchema>;
  /** Routes outside /api/v1 that take no token (share links), answered in plain text or HTML. */
  publicRoutes?(service: Service): PublicRoute[];
}

/** The caller a domain's plugin API acts for, and the policy's scope check. */
export interface DomainCaller {
  principal: Principal;
  /** Throws MissingScope unless the caller's token allows every scope. */
  entitle(scopes: string[], what: string): void;
  /**
   * May the caller read what `namespace` governs with `scope`? (The namespace is visible to them and
   * their token carries the scope.) Search asks it per kind of resource.
   */
  mayRead(namespace: string, scope: string): Promise<boolean>;
  /** Is the namespace (a domain's REST group) visible to the caller: no operator switch off, its rule passes? */
  groupVisible(namespace: string): Promise<boolean>;
}

/** Periodic upkeep a domain needs (purging expired data, ...), run by the host process. */
export interface Upkeep<Service, Settings> {
  everyMinutes(settings: Settings): number;
  /** Runs once at start, then every `everyMinutes`; a failure is logged and retried next time. */
  run(service: Service, log: Logger): Promise<void>;
}

export interface Domain<Service = unknown, Settings = unknown> {
  /** Also the key of its service in the host and of its settings section in the config. */
  name: string;
  /** MikroORM entity schemas (defineEntity). */
  entities: readonly unknown[];
  /** Its migrations, each named like its file; applied in name order across all domains. */
  migrations: MigrationObject[];
  scopes?: Record<string, ScopeDefinition>;
  create: (env: DomainEnv<Settings>) => Service;
  /** Its REST group, or groups (identity has three: tokens, users, oauth). */
  rest?: RestGroup<Service> | RestGroup<Service>[];
  /**
   * The domain's API for plugins, `ctx.services.<name>`: its service bound to the caller, each
   * method checking its scopes through `caller.entitle`. Its type is declared in the SDK.
   */
  bind?: (service: Service, caller: DomainCaller) => unknown;
  upkeep?: Upkeep<Service, Settings>;
  /** The domain's resources with text, for global search: one source per kind. */
  search?: (service: Service) => SearchSource[];
}

/** Adds types only; returns its argument unchanged. */
export function defineDomain<Service, Settings = unknown>(domain: Domain<Service, Settings>): Domain<Service, Settings> {
  return domain;
}
