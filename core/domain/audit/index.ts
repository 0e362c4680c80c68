// The audit log as one registration: its table, the reading service and its REST groups (the log
// for admins, governed by the `admin` namespace; a user's own events, by `users`), and the upkeep
// that deletes records older than audit.retentionDays. Services write to it with recordAudit
// (./record.ts) in their own transactions.
import { defineDomain } from '../../contract/domain.ts';
import { auditEntities } from './entities.ts';
import { Migration20261220000000_audit } from './migrations/Migration20261220000000_audit.ts';
import { adminAuditRoutes, COMPONENTS, myEventsRoutes } from './rest/routes.ts';
import { AuditService, type AuditSettings } from './service.ts';

export const auditDomain = defineDomain<AuditService, AuditSettings>({
  name: 'audit',
  entities: auditEntities,
  migrations: [{ name: 'Migration20261220000000_audit', class: Migration20261220000000_audit }],
  create: ({ db, settings, log }) => new AuditService(db.orm, settings, log),
  rest: [
    {
      tag: 'admin',
      description: 'The audit log for admins: who did what, when, from where; filtered, paged, or exported as JSON Lines.',
      namespace: 'admin',
      routes: adminAuditRoutes,
      components: COMPONENTS,
    },
    {
      tag: 'events',
      description: "Your own account's security events: sign-ins, tokens, grants, shares, changes an admin made.",
      namespace: 'users',
      routes: myEventsRoutes,
    },
  ],
  upkeep: {
    everyMinutes: () => 60,
    run: async (service, log) => {
      const n = await service.purge();
      if (n > 0) log.info({ deleted: n }, 'deleted audit records past their retention');
    },
  },
});
