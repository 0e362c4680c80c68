// The operators' services, one object the admin REST group and the admin namespace (curl, MCP)
// both call: each rule (admin only, which namespaces exist, what a job's failure was) holds once.
import type { Logger } from 'pino';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { TranscribeService } from '../../domain/transcribe/service.ts';
import type { Principal } from '../../domain/identity/types.ts';
import type { JobQueue } from '../../db/jobs.ts';
import type { PluginStatus } from '../../sdk/index.ts';
import { NotFound } from '../../contract/errors.ts';
import type { Policy } from '../policy.ts';
import { NamespaceAccessAdmin, requireAdmin } from './access.ts';
import { JobsAdmin } from './jobs.ts';

export interface AdminDeps {
  identity: IdentityService;
  transcribe: TranscribeService;
  /** The kind of queue job a transcription runs as. */
  transcribeKind: string;
  policy: Policy;
  jobs: JobQueue;
  log: Logger;
}

export const PLUGIN_404 = 'no plugin serves that namespace here.';

export class AdminService {
  readonly access: NamespaceAccessAdmin;
  readonly jobs: JobsAdmin;
  readonly #d: AdminDeps;

  constructor(deps: AdminDeps) {
    this.#d = deps;
    this.access = new NamespaceAccessAdmin({ identity: deps.identity, policy: deps.policy, log: deps.log });
    this.jobs = new JobsAdmin(deps.jobs, deps.transcribe, deps.transcribeKind);
  }

  /** Every plugin folder: namespace, version, state, isolation, capabilities asked for and granted, last error. */
  plugins(principal: Principal): PluginStatus[] {
    requireAdmin(principal, 'plugin status');
    return this.#d.policy.registry.status();
  }

  /** Loads a plugin's files again (as an edit would); a broken version leaves the last good one serving. */
  async reloadPlugin(principal: Principal, namespace: string): Promise<PluginStatus> {
    requireAdmin(principal, 'reloading plugins');
    const registry = this.#d.policy.registry;
    const before = registry.status().find((s) => s.namespace === namespace);
    if (!before) throw new NotFound(PLUGIN_404);
    await registry.reload(before.dir);
    return registry.status().find((s) => s.dir === before.dir) ?? before;
  }
}
