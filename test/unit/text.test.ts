// The one text rule (core/contract/text.ts) and the JSON body reader that applies it: NUL and lone
// surrogates are refused with where they were; a surrogate pair, an escaped backslash before
// "u0000" and ordinary Unicode are not.
import t from 'tap';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { BadArguments } from '../../core/contract/errors.ts';
import { findTextProblem, textProblem } from '../../core/contract/text.ts';
import { readJsonRequest } from '../../core/surfaces/http/body.ts';

t.test('textProblem and findTextProblem', async (t) => {
  t.equal(textProblem('plain, ünïcode, 会議, 😀'), undefined);
  t.match(textProblem('a\u0000b'), /NUL/);
  t.match(textProblem('a\ud800b'), /lone surrogates/);
  t.match(textProblem('\udc00'), /lone surrogates/);
  t.same(findTextProblem({ a: [1, { b: 'ok' }, 'x\u0000'] }), { path: '/a/2', message: 'must not contain NUL characters (\\u0000)' });
  t.match(findTextProblem({ 'we/ird~key\u0000': 1 }), { path: '/we~1ird~0key\\u0000', message: /a name/ });
  t.equal(findTextProblem({ deep: [[[['fine']]]], n: 1, z: null, b: true }), undefined);
});

/** A request carrying `body` as JSON text. */
function request(body: string): IncomingMessage {
  const r = Readable.from([Buffer.from(body)]) as unknown as IncomingMessage;
  r.headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
  return r;
}

t.test('the body reader refuses NUL and lone surrogates, and only those', async (t) => {
  const limits = { requestBytes: 1 << 20, jsonDepth: 32 };
  t.same(await readJsonRequest(request('{"e":"\\ud83d\\ude00","s":"\\\\u0000"}'), limits), { e: '😀', s: '\\u0000' });
  for (const bad of ['{"a":"\\u0000"}', '{"a":["\\ud800"]}', '{"\\udfff":1}', '"\\uDC00"']) {
    const err = await readJsonRequest(request(bad), limits).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof BadArguments, bad);
  }
});
