// The page an invitation link opens: it names the account and takes a new password (twice). The
// link's secret is in the path and works once; the page may not be framed and is never cached.
import Router from '@koa/router';
import type { Context } from 'koa';
import type { IdentityService } from '../../domain/identity/service.ts';
import { INVITATION_PATH, PASSWORD_MIN } from '../../domain/identity/passwords.ts';
import { BadArguments, NotFound } from '../../contract/errors.ts';
import { esc, page } from './html.ts';

const FORM_MAX_BYTES = 8 * 1024;

function secure(ctx: Context): void {
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
}

function show(ctx: Context, status: number, title: string, body: string): void {
  secure(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page(title, body);
}

async function readForm(ctx: Context): Promise<URLSearchParams | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_MAX_BYTES) return null;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const GONE = `<h1>This link does not work</h1><p>It is unknown, used or expired. Ask your Folio admin for a new one.</p>`;

export function invitationRouter(identity: IdentityService): Router {
  const router = new Router({ prefix: INVITATION_PATH.replace(/\/$/, '') });

  const form = (ctx: Context, email: string, problem?: string) =>
    `<h1>Set your Folio password</h1>
<p>For <strong>${esc(email)}</strong>. You sign in with it when an app (an MCP client, the command line) connects to Folio for you.</p>
${problem ? `<p role="alert"><strong>${esc(problem)}</strong></p>` : ''}
<form method="post" action="${esc(ctx.path)}">
<p><label>New password (at least ${PASSWORD_MIN} characters) <input name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" required></label></p>
<p><label>The same again <input name="confirm" type="password" autocomplete="new-password" required></label></p>
<p><button type="submit">Set password</button></p>
</form>`;

  router.get('/:secret', async (ctx) => {
    try {
      const { email } = await identity.passwords.invitation(ctx.params['secret'] ?? '');
      show(ctx, 200, 'Set your Folio password', form(ctx, email));
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      show(ctx, 404, 'Invitation', GONE);
    }
  });

  router.post('/:secret', async (ctx) => {
    const secret = ctx.params['secret'] ?? '';
    let email: string;
    try {
      ({ email } = await identity.passwords.invitation(secret));
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      return show(ctx, 404, 'Invitation', GONE);
    }
    const fields = await readForm(ctx);
    if (!fields) return show(ctx, 413, 'Set your Folio password', form(ctx, email, 'That form is too large.'));
    const password = fields.get('password') ?? '';
    if (password !== fields.get('confirm')) return show(ctx, 400, 'Set your Folio password', form(ctx, email, 'The two passwords differ.'));
    try {
      await identity.passwords.accept(secret, password);
    } catch (err) {
      if (err instanceof NotFound) return show(ctx, 404, 'Invitation', GONE);
      if (err instanceof BadArguments) return show(ctx, 400, 'Set your Folio password', form(ctx, email, err.message));
      throw err;
    }
    show(
      ctx,
      200,
      'Password set',
      `<h1>Your password is set</h1><p>Sign in as <strong>${esc(email)}</strong> the next time an app connects to Folio for you. This link no longer works.</p>`,
    );
  });

  return router;
}
