// The check every REST test file's server runs on close (test/helpers/openapi-answers.ts): real
// answers of a real server pass it, and an answer that contradicts the document does not. Also the
// answer the document used to get wrong: a tus creation that brings every byte is a 201 with the file.
import t from 'tap';
import { startTestServer, req, createUser } from '../helpers/server.ts';
import { answerChecker, type RecordedAnswer } from '../helpers/openapi-answers.ts';

const s = await startTestServer({ checkAnswers: true, keepAnswers: true });
t.teardown(() => s.close());
const alice = await createUser(s, 'answers-alice@example.com');
const checker = answerChecker((await req(s, 'GET', '/api/v1/openapi.json')).text);
const last = (): RecordedAnswer => s.answers![s.answers!.length - 1]!;

t.test('real answers are as documented, and each contradiction is named', async (t) => {
  const created = await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: 'Plan', body: 'x' } });
  t.equal(created.status, 201);
  const answer = last();
  t.same(checker.check(answer), [], 'a created note');
  const missing = await req(s, 'GET', '/api/v1/notetaker/notes/00000000-0000-4000-8000-000000000000', { token: alice.token });
  t.equal(missing.status, 404);
  const problem = last();
  t.same(checker.check(problem), [], 'a 404 problem');

  const note = JSON.parse(answer.body.toString());
  const without = { ...answer, body: Buffer.from(JSON.stringify({ ...note, version: undefined })) };
  t.match(checker.check(without), [/body must have required property 'version'/], 'a field the schema requires, missing');
  t.match(checker.check({ ...answer, status: 418 }), [/status 418 is not documented/]);
  t.match(checker.check({ ...answer, contentType: 'text/html' }), [/text\/html is not documented for 201/]);
  const wrongCode = { ...JSON.parse(problem.body.toString()), code: 'conflict' };
  t.match(checker.check({ ...problem, body: Buffer.from(JSON.stringify(wrongCode)) }), [/problem code conflict is not listed for 404/]);
  t.same(checker.check({ ...answer, url: '/api/v1/no/such/operation' }), [], 'no operation: nothing to hold it to');
});

t.test('a tus creation that brings every byte answers 201 with the file, as documented', async (t) => {
  const bytes = Buffer.from('all at once\n');
  const res = await fetch(`${s.url}/api/v1/filedb/uploads`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${alice.token}`,
      'tus-resumable': '1.0.0',
      'upload-length': String(bytes.length),
      'upload-metadata': `name ${Buffer.from('once.txt').toString('base64')}`,
      'content-type': 'application/offset+octet-stream',
    },
    body: bytes,
  });
  t.equal(res.status, 201);
  const file = (await res.json()) as { id: string };
  t.match(file, { name: 'once.txt', size: bytes.length, version: 1 });
  t.equal(res.headers.get('folio-file-id'), file.id);
  t.same(checker.check(last()), []);
  t.match(last().contentType, /^application\/json/);
});

t.test('the answers so far were recorded and are all checked on close', async (t) => {
  const checked = s.answers!.filter((a) => checker.operation(a.method, a.url));
  t.equal(checked.length, 3, `${checked.length} answers of documented operations`);
  t.same(
    checked.flatMap((a) => checker.check(a)),
    [],
  );
});
