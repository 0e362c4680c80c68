// The one way anything is written to the audit log: `recordAudit(em, event)`, called by a service
// inside the unit of work that makes the change it records, so the record commits or rolls back
// with the change. Who, from where and which request come from the request being handled
// (core/contract/request-context.ts); outside a request (jobs, the command line) they are null.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentRequest } from '../../contract/request-context.ts';
import type { Principal } from '../identity/types.ts';

/**
 * The kinds of event the log records (docs/rest.md lists them, and what is not recorded yet). Only
 * actions something writes are here: the action filter refuses any other.
 */
export const AUDIT_ACTIONS = [
  'signin.succeeded',
  'signin.failed',
  'password.changed',
  'token.created',
  'token.rotated',
  'token.revoked',
  'share.created',
  'share.accessed',
  'share.revoked',
  'namespace.switched',
  'user.created',
  'user.updated',
  'user.deactivated',
  'user.reactivated',
  'user.deleted',
  'user.invited',
  'export.created',
  'tool.called',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Actions that are part of a user's own security history (GET /users/me/events): all but tool calls. */
export const SECURITY_ACTIONS: readonly AuditAction[] = AUDIT_ACTIONS.filter((a) => a !== 'tool.called');

export interface AuditActor {
  id: string;
  email?: string | null;
}

export interface AuditEvent {
  action: AuditAction;
  /** Who did it: a principal, a user, or null (an unknown caller, a failed sign-in). */
  actor: Principal | AuditActor | null;
  /** The account the event concerns (its owner's security history); default: the actor. */
  subject?: string | null;
  outcome?: 'success' | 'failure';
  target?: { type: string; id: string } | null;
  /** A few facts about it (never secrets, never a call's arguments). */
  detail?: Record<string, unknown>;
}

const MAX_UA = 512;

const INSERT = `insert into audit_events (actor_id, actor_email, subject_id, action, outcome, target_type, target_id, address, user_agent, request_id, detail)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)`;

function actorOf(a: AuditEvent['actor']): AuditActor | null {
  if (!a) return null;
  return 'user' in a ? { id: a.user.id, email: a.user.email } : a;
}

/** The insert's parameters: the event and the request it came with. */
export function auditParams(event: AuditEvent): unknown[] {
  const actor = actorOf(event.actor);
  const request = currentRequest();
  const ua = request?.userAgent();
  return [
    actor?.id ?? null,
    actor?.email ?? null,
    event.subject === undefined ? (actor?.id ?? null) : event.subject,
    event.action,
    event.outcome ?? 'success',
    event.target?.type ?? null,
    event.target?.id ?? null,
    request?.address() ?? null,
    typeof ua === 'string' ? ua.slice(0, MAX_UA) : null,
    request?.requestId ?? null,
    JSON.stringify(event.detail ?? {}),
  ];
}

/** Appends the event in `em`'s transaction (the change's own). */
export async function recordAudit(em: Pick<EntityManager, 'execute'>, event: AuditEvent): Promise<void> {
  await em.execute(INSERT, auditParams(event));
}
