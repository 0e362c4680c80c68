// The public side of a share link: GET/HEAD /s/{token}, no bearer token. A program sends the
// password as X-Share-Password; a browser without one gets a small page with a password form, which
// posts back to the same URL. A download counts when its body starts at the first byte (a resumed
// range does not count again), and on a link with a download limit every answer with a body counts
// (else `bytes=1-` plus `bytes=0-0` fetched the whole file any number of times); HEAD never counts.
import { PasswordRequired } from '../../../contract/errors.ts';
import type { PublicCall, PublicRoute, Reply } from '../../../contract/rest.ts';
import type { FilesServiceImpl } from '../service.ts';
import { downloadReply } from './download.ts';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function passwordPage(wrong: boolean): Reply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Password required</title>
<style>body{font:16px system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}input,button{font:inherit;padding:.4rem;margin:.3rem 0;width:100%}</style>
</head><body><h1>Password required</h1><p>${escape(wrong ? 'That password is not right. Try again.' : 'This shared file is protected by a password.')}</p>
<form method="post"><label>Password <input type="password" name="password" autofocus required></label><button type="submit">Download</button></form>
</body></html>`;
  return {
    status: 401,
    body: html,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
      'X-Frame-Options': 'DENY',
    },
  };
}

async function serve(files: FilesServiceImpl, call: PublicCall, password: string | undefined): Promise<Reply> {
  const token = call.params.token ?? '';
  let opened;
  try {
    opened = await files.shares.open(token, password, call.client);
  } catch (err) {
    const browser = /text\/html/.test(call.header('accept') ?? '');
    if (err instanceof PasswordRequired && browser) return passwordPage(password !== undefined);
    throw err;
  }
  const { ref, share_id, limited } = opened;
  // A POSTed form is a browser's download: answer as a GET of the content.
  const req = { method: call.method === 'HEAD' ? 'HEAD' : 'GET', header: call.header };
  const reply = await downloadReply(req, ref, (range) => files.read(ref, range), {
    onBody: async (range) =>
      limited || range === undefined || range.start === 0 ? files.shares.recordDownload(share_id) : files.shares.touch(share_id),
  });
  reply.headers = { ...reply.headers, 'X-Robots-Tag': 'noindex' };
  return reply;
}

export function filesPublicRoutes(files: FilesServiceImpl): PublicRoute[] {
  return [
    { method: 'GET', path: '/s/{token}', handler: (call) => serve(files, call, call.header('x-share-password')) },
    {
      method: 'POST',
      path: '/s/{token}',
      handler: async (call) => serve(files, call, (await call.form()).password ?? call.header('x-share-password')),
    },
  ];
}
