// SCIM 2.0 at /scim/v2, as an identity provider uses it: discovery, create, find by userName,
// deactivate with PATCH (every token stops), rename, delete; the SCIM error format; admins with
// the scope users only; a filter that is not the one supported is refused, never interpreted.
import t from 'tap';
import { startTestServer, req, createUser } from '../helpers/server.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const SCIM = 'application/scim+json';
const scim = (method: string, path: string, body?: unknown, token = s.adminToken) =>
  req(s, method, `/scim/v2${path}`, { token, ...(body === undefined ? {} : { body, headers: { 'content-type': SCIM } }) });

t.test('discovery', async (t) => {
  const spc = await scim('GET', '/ServiceProviderConfig');
  t.equal(spc.status, 200);
  t.match(spc.headers.get('content-type') ?? '', /application\/scim\+json/);
  t.equal(spc.json().patch.supported, true);
  t.equal(spc.json().filter.supported, true);
  const types = await scim('GET', '/ResourceTypes');
  t.same(
    types.json().Resources.map((r: { endpoint: string }) => r.endpoint),
    ['/Users'],
  );
  const groups = await scim('GET', '/Groups');
  t.equal(groups.status, 404, 'no Groups resource');
  t.equal(groups.json().status, '404', 'said in the SCIM error format');
  const schemas = await scim('GET', '/Schemas');
  t.equal(schemas.json().Resources[0].id, 'urn:ietf:params:scim:schemas:core:2.0:User');
});

t.test('an identity provider provisions, finds, deactivates, renames and deletes a user', async (t) => {
  const made = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'Okta.User@Example.com',
    name: { givenName: 'Okta', familyName: 'User' },
    emails: [{ value: 'okta.user@example.com', primary: true }],
    active: true,
  });
  t.equal(made.status, 201);
  const user = made.json();
  t.equal(user.userName, 'okta.user@example.com', 'userName is the email, lowercased');
  t.equal(user.name.formatted, 'Okta User');
  t.equal(user.active, true);
  t.equal(made.headers.get('location'), `${s.url}/scim/v2/Users/${user.id}`);
  const again = await scim('POST', '/Users', { userName: 'okta.user@example.com' });
  t.equal(again.status, 409);
  t.equal(again.json().scimType, 'uniqueness');
  t.same(again.json().schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  t.equal(again.json().status, '409');

  const found = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "OKTA.user@example.com"')}`);
  t.equal(found.status, 200);
  t.equal(found.json().totalResults, 1);
  t.equal(found.json().Resources[0].id, user.id);
  const none = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`);
  t.equal(none.json().totalResults, 0, 'no match: an empty list');
  // A filter is parsed by a grammar: what is not SCIM is refused, and a value is only ever data.
  for (const bad of [
    'userName eq "x") or (1 eq 1',
    "userName eq 'x'",
    'userName eq',
    'userName zz "a"',
    'userName eq "okta.user@example.com\\" or 1=1 --"',
  ]) {
    const r = await scim('GET', `/Users?filter=${encodeURIComponent(bad)}`);
    t.equal(r.status, 400, `filter ${bad} refused`);
    t.equal(r.json().scimType, 'invalidFilter');
  }
  for (const data of ['userName eq "\\"', `userName eq "x' or '1'='1"`, 'userName eq "okta.user@example.com; drop table users"']) {
    const r = await scim('GET', `/Users?filter=${encodeURIComponent(data)}`);
    t.equal(r.status, 200, `filter ${data} is a value to look for`);
    t.equal(r.json().totalResults, 0, `${data} matches nobody`);
  }
  // Text Folio cannot keep (PostgreSQL holds no NUL; %FF is not UTF-8) is refused, never a 500.
  for (const bad of ['userName eq "a%00b@example.com"', 'userName eq "caf%E9@example.com"']) {
    const r = await scim('GET', `/Users?filter=${bad.replaceAll(' ', '%20').replaceAll('"', '%22')}`);
    t.equal(r.status, 400, `${bad}: 400`);
    t.equal(r.json().scimType, 'invalidValue');
  }
  // Other filters are matched over the directory: everyone, by domain, by state.
  const everyone = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@x.org" or userName pr')}`);
  t.equal(everyone.status, 200);
  const total = (await scim('GET', '/Users')).json().totalResults;
  t.equal(everyone.json().totalResults, total, 'userName pr: everyone');
  const domain = await scim('GET', `/Users?filter=${encodeURIComponent('emails[value ew "@example.com"] and active eq true')}`);
  t.equal(domain.status, 200);
  t.ok(
    domain.json().Resources.some((r: { id: string }) => r.id === user.id),
    'a filter on a multi-valued attribute finds the new user',
  );
  t.ok(
    domain.json().Resources.every((r: { userName: string }) => r.userName.endsWith('@example.com')),
    'and only users of that domain',
  );
  const all = await scim('GET', '/Users?startIndex=1&count=1');
  t.equal(all.json().itemsPerPage, 1);
  t.ok(all.json().totalResults >= 2, 'paged by startIndex and count, with the total');

  // A user who already works in Folio: found by userName and deactivated, their token stops at once.
  const worker = await createUser(s, 'worker@example.com');
  const listed = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "worker@example.com"')}`);
  const workerId = listed.json().Resources[0].id;
  t.equal(workerId, worker.id);
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: worker.token })).status, 200);
  const stop = await scim('PATCH', `/Users/${workerId}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'active', value: false }],
  });
  t.equal(stop.json().active, false);
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: worker.token })).status, 401, 'their token stops at once');

  const off = await scim('PATCH', `/Users/${user.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'active', value: false }],
  });
  t.equal(off.status, 200);
  t.equal(off.json().active, false, 'deactivated');
  t.equal((await req(s, 'GET', `/api/v1/users/${user.id}`, { token: s.adminToken })).json().active, false, 'as Folio sees it');
  const entra = await scim('PATCH', `/Users/${user.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'Replace', value: { active: 'True', 'name.formatted': 'Renamed User' } }],
  });
  t.equal(entra.status, 200, 'the path-less form, with a string boolean');
  t.equal(entra.json().active, true);
  t.equal(entra.json().name.formatted, 'Renamed User');
  const email = await scim('PATCH', `/Users/${user.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'userName', value: 'Other@Example.com' }],
  });
  t.equal(email.status, 200, 'a new email is applied');
  t.equal(email.json().userName, 'other@example.com');
  const put = await scim('PUT', `/Users/${user.id}`, { userName: 'okta.user@example.com', displayName: 'Put Name', active: true });
  t.equal(put.json().displayName, 'Put Name');
  t.equal(put.json().userName, 'okta.user@example.com', 'and changed back by a PUT');

  t.equal((await scim('DELETE', `/Users/${user.id}`)).status, 204);
  const gone = await scim('GET', `/Users/${user.id}`);
  t.equal(gone.status, 404);
  t.equal(gone.json().status, '404');
  t.equal((await scim('GET', '/Users/not-a-uuid')).status, 404);
});

t.test("a new email address changes the account's, and nothing else", async (t) => {
  const mover = await createUser(s, 'mover@example.com');
  await createUser(s, 'sitter@example.com');
  const moved = await scim('PATCH', `/Users/${mover.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'Mover.New@Example.com' }],
  });
  t.equal(moved.status, 200);
  t.same(moved.json().emails, [{ value: 'mover.new@example.com', primary: true, type: 'work' }]);
  const me = await req(s, 'GET', '/api/v1/users/me', { token: mover.token });
  t.equal(me.status, 200, 'their token stays valid');
  t.equal(me.json().email, 'mover.new@example.com', 'and the account has the new address');
  const old = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "mover@example.com"')}`);
  t.equal(old.json().totalResults, 0, 'the old address names nobody');
  const taken = await scim('PUT', `/Users/${mover.id}`, { userName: 'SITTER@example.com', active: true });
  t.equal(taken.status, 409, "another user's address, in another case");
  t.equal(taken.json().scimType, 'uniqueness');
  t.match(taken.json().detail, /sitter@example\.com/);
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: mover.token })).json().email, 'mover.new@example.com', 'unchanged');
  const extra = await scim('PATCH', `/Users/${mover.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'add', path: 'emails', value: [{ value: 'second@example.com', type: 'home' }] }],
  });
  t.equal(extra.status, 400, 'a second address is refused, not ignored');
  t.match(extra.json().detail, /second@example\.com was not applied/);
  // The REST API changes it the same way.
  const rest = await req(s, 'PATCH', `/api/v1/users/${mover.id}`, { token: s.adminToken, body: { email: 'Mover.Rest@Example.com' } });
  t.equal(rest.status, 200);
  t.equal(rest.json().email, 'mover.rest@example.com');
  const clash = await req(s, 'PATCH', `/api/v1/users/${mover.id}`, { token: s.adminToken, body: { email: 'sitter@example.com' } });
  t.equal(clash.status, 409);
  t.equal(clash.json().code, 'conflict');
});

t.test('a userName kept as given is unique without case, bounded, and needs an address in emails', async (t) => {
  const patch = (id: string, ...Operations: unknown[]) =>
    scim('PATCH', `/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations });
  const user = (userName: string, email: string) =>
    scim('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      emails: [{ value: email, primary: true, type: 'work' }],
    });
  const jdoe = await user('jdoe', 'jdoe1@example.com');
  t.equal(jdoe.status, 201);
  const twin = await user('JDoe', 'jdoe2@example.com');
  t.equal(twin.status, 409, 'the same userName in another case is taken');
  t.equal(twin.json().scimType, 'uniqueness');
  t.match(twin.json().detail, /JDoe/);
  const other = await user('jsmith', 'jsmith@example.com');
  t.equal(other.status, 201, 'another name is free');
  const renamed = await patch(other.json().id, { op: 'replace', path: 'userName', value: 'JDOE' });
  t.equal(renamed.status, 409, 'a PATCH to a userName another user keeps');
  t.equal(renamed.json().scimType, 'uniqueness');
  const put = await scim('PUT', `/Users/${other.json().id}`, {
    userName: 'jDoe',
    emails: [{ value: 'jsmith@example.com', primary: true }],
  });
  t.equal(put.status, 409, 'and a PUT');
  t.equal((await scim('GET', `/Users/${other.json().id}`)).json().userName, 'jsmith', 'unchanged');

  const long = await user('n'.repeat(257), 'long@example.com');
  t.equal(long.status, 400, 'a userName of 257 characters');
  t.equal(long.json().scimType, 'invalidValue');
  t.match(long.json().detail, /userName: at most 256 characters/);
  t.equal((await user('n'.repeat(256), 'long@example.com')).status, 201, '256 are kept');
  const grown = await patch(jdoe.json().id, { op: 'replace', path: 'userName', value: 'm'.repeat(257) });
  t.equal(grown.status, 400, 'a PATCH to a userName too long');

  const bad = await user('weird', 'a b@example.com');
  t.equal(bad.status, 400, 'an address that is not one');
  t.match(bad.json().detail, /emails: "a b@example\.com" is not an email address/, 'is named as such');

  for (const op of [
    { op: 'remove', path: 'emails' },
    { op: 'replace', path: 'emails', value: [] },
  ]) {
    const r = await patch(jdoe.json().id, op);
    t.equal(r.status, 400, `${op.op} emails, with a userName that is not an address, is refused`);
    t.equal(r.json().scimType, 'invalidValue');
    t.match(r.json().detail, /keeps one email address \(jdoe1@example\.com\)/);
  }
  const mailed = await scim('POST', '/Users', { userName: 'mailed@example.com' });
  const gone = await patch(mailed.json().id, { op: 'remove', path: 'emails' });
  t.equal(gone.status, 400, 'and with a userName that is the address');
  t.equal(gone.json().scimType, 'invalidValue');
  const kept = await scim('PUT', `/Users/${mailed.json().id}`, { userName: 'mailed@example.com', active: true });
  t.equal(kept.status, 200, 'a PUT without emails keeps the address its userName is');
  const unnamed = await scim('PUT', `/Users/${jdoe.json().id}`, { userName: 'jdoe', active: true });
  t.equal(unnamed.status, 400, 'a PUT without emails whose userName is no address is refused');
  t.equal((await scim('GET', `/Users/${jdoe.json().id}`)).json().emails[0].value, 'jdoe1@example.com', 'and kept the address');
});

t.test('admins with the scope users only', async (t) => {
  t.equal((await scim('GET', '/Users', undefined, '')).status, 401, 'no token');
  const plain = await createUser(s, 'plain@example.com');
  const r = await scim('GET', '/Users', undefined, plain.token);
  t.equal(r.status, 403);
  t.same(r.json().schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  const reader = await req(s, 'POST', '/api/v1/tokens', {
    token: s.adminToken,
    body: { name: 'reader', scopes: ['notes:read'], expires_in_days: 1 },
  });
  t.equal((await scim('GET', '/Users', undefined, reader.json().token)).status, 403, "an admin's token without the scope users");
  const bad = await req(s, 'POST', '/scim/v2/Users', { token: s.adminToken, body: '{"userName": ', headers: { 'content-type': SCIM } });
  t.equal(bad.status, 400, 'a broken body');
  t.equal(bad.json().status, '400');
});

t.test('the SCIM schema is enforced, PATCH takes full paths, and nothing odd is a 500', async (t) => {
  const wrongType = await scim('POST', '/Users', { userName: 42 });
  t.equal(wrongType.status, 400, 'userName must be a string');
  t.equal(wrongType.json().scimType, 'invalidValue');
  const noName = await scim('POST', '/Users', { active: true });
  t.equal(noName.status, 400, 'userName is required');
  for (const body of [[], 'text', null]) {
    const r = await scim('POST', '/Users', body);
    t.equal(r.status, 400, `a body of ${JSON.stringify(body)} is refused`);
    t.equal(r.json().status, '400');
  }
  const made = await scim('POST', '/Users', { userName: 'paths@example.com', name: { formatted: 'Path User' } });
  t.equal(made.status, 201);
  const id = made.json().id;
  // Entra ID's way: a path with a value filter, a replace of the email with itself, and a rename.
  const entra = await scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'paths@example.com' },
      { op: 'Replace', path: 'name.formatted', value: 'Path Renamed' },
    ],
  });
  t.equal(entra.status, 200);
  t.equal(entra.json().name.formatted, 'Path Renamed');
  const badOp = await scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'explode', path: 'active', value: false }],
  });
  t.equal(badOp.status, 400, 'an unknown op');
  const noSchema = await scim('PATCH', `/Users/${id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] });
  t.equal(noSchema.status, 400, 'a PATCH without the PatchOp schema');
  const badValue = await scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'active', value: 'maybe' }],
  });
  t.equal(badValue.status, 400, 'active must be a boolean');
  t.equal((await scim('GET', `/Users/${id}`)).json().active, true, 'nothing was changed by the refused operations');
  const only = await scim('GET', `/Users/${id}?attributes=userName`);
  t.equal(only.json().userName, 'paths@example.com');
  t.equal(only.json().name, undefined, 'attributes= narrows what is returned');
  t.equal((await scim('GET', '/Users?startIndex=x')).status, 400, 'startIndex must be an integer');
  // A number past what the database takes as an offset is refused in SCIM's terms, on either path.
  const userNameEq = `&filter=${encodeURIComponent('userName eq "paths@example.com"')}`;
  for (const q of ['startIndex=99999999999999999999', 'count=99999999999999999999', 'startIndex=9223372036854775807', 'startIndex=1e20']) {
    for (const extra of ['', userNameEq]) {
      const r = await scim('GET', `/Users?${q}${extra}`);
      t.equal(r.status, 400, `${q}${extra ? ' with a filter' : ''}: 400`);
      t.same(r.json().schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
      t.equal(r.json().scimType, 'invalidValue');
      t.match(r.json().detail, /^(startIndex|count) must be an integer of at most 15 digits/);
    }
  }
  const far = await scim('GET', `/Users?startIndex=999999999999999&count=999999999999999${userNameEq}`);
  t.equal(far.status, 200, 'a large start within range is a page past the end');
  t.match(far.json(), { totalResults: 1, itemsPerPage: 0, Resources: [] });
  t.same((await scim('GET', '/Users?startIndex=-5&count=1')).json().startIndex, 1, 'below 1 is 1');
  // A filter on a sub-attribute is matched over the directory like any other.
  for (const f of ['emails.value ew "paths@example.com"', 'meta.created gt "2000-01-01T00:00:00Z"']) {
    const r = await scim('GET', `/Users?filter=${encodeURIComponent(f)}`);
    t.equal(r.status, 200, `filter ${f}: 200`);
    t.ok(
      r.json().Resources?.some((u: { id: string }) => u.id === id),
      `filter ${f} finds the user`,
    );
  }
  const injected = await scim('GET', `/Users/${encodeURIComponent('x" or userName pr or id eq "y')}`);
  t.equal(injected.status, 404, 'an id is never read as a filter');
  const foreign = await scim('DELETE', `/Users/${crypto.randomUUID()}`);
  t.equal(foreign.status, 404);
  t.equal(foreign.json().status, '404');
});

t.test('the enterprise extension is declared; what Folio cannot keep is refused, never ignored', async (t) => {
  const schemas = (await scim('GET', '/Schemas')).json().Resources.map((r: { id: string }) => r.id);
  t.ok(schemas.includes('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'), 'the enterprise extension in /Schemas');
  const types = (await scim('GET', '/ResourceTypes/User')).json();
  t.match(types.schemaExtensions, [{ schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', required: false }]);
  const made = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'keeps@example.com',
    displayName: 'Kim',
  });
  t.equal(made.status, 201);
  const id = made.json().id;
  const patch = (Operations: unknown[]) =>
    scim('PATCH', `/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations });
  const password = await patch([{ op: 'replace', path: 'password', value: 'a-new-secret-0123' }]);
  t.equal(password.status, 400, 'a password is refused');
  t.equal(password.json().scimType, 'invalidPath');
  const both = await patch([{ op: 'replace', value: { displayName: 'One', 'name.formatted': 'Another' } }]);
  t.equal(both.status, 400, 'two different names at once cannot both apply');
  t.match(both.json().detail, /one name/);
  const nick = await patch([{ op: 'add', path: 'nickName', value: 'Kimmy' }]);
  t.equal(nick.status, 200, 'an attribute with no column of its own is kept');
  t.equal((await scim('GET', `/Users/${id}`)).json().nickName, 'Kimmy', 'and echoed');
  t.equal((await scim('GET', `/Users/${id}`)).json().displayName, 'Kim', 'nothing else changed');
  // The REST API shows the account as it always did.
  const rest = await req(s, 'GET', `/api/v1/users/${id}`, { token: s.adminToken });
  t.equal(rest.json().name, 'Kim');
  t.notOk('nickName' in rest.json() || 'scim' in rest.json(), 'the SCIM profile is not part of the REST user');
});

t.test('the attributes kept as sent are bounded: too many values or too many bytes is a 400', async (t) => {
  const user = (userName: string, extra: Record<string, unknown>) =>
    scim('POST', '/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName, ...extra });
  const phones = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `+1 555 0100 ${i}`, type: 'work' }));
  const many = await user('many@example.com', { phoneNumbers: phones(21) });
  t.equal(many.status, 400, '21 phone numbers are refused');
  t.equal(many.json().scimType, 'invalidValue');
  t.match(many.json().detail, /phoneNumbers: at most 20 values/);
  const big = await user('big@example.com', { nickName: 'n'.repeat(17 * 1024) });
  t.equal(big.status, 400, 'a profile over 16 KB is refused');
  t.equal(big.json().scimType, 'invalidValue');
  const none = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "many@example.com" or userName eq "big@example.com"')}`);
  t.equal(none.json().totalResults, 0, 'no account was made for either');

  const fits = await user('fits@example.com', { phoneNumbers: phones(20) });
  t.equal(fits.status, 201, '20 phone numbers are kept');
  t.equal(fits.json().phoneNumbers.length, 20);
  const id = fits.json().id;
  const grown = await scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'add', path: 'phoneNumbers', value: [{ value: '+1 555 0199', type: 'home' }] }],
  });
  t.equal(grown.status, 400, 'a PATCH making them 21 is refused');
  t.equal((await scim('GET', `/Users/${id}`)).json().phoneNumbers.length, 20, 'and changed nothing');
});

t.test('a filter over the directory sees every user, not only the first page of them', async (t) => {
  // More users than the users service gives in one page (200), sorted after everyone else.
  const emails = Array.from({ length: 230 }, (_, i) => `zz-bulk-${String(i).padStart(3, '0')}@bulk.example`);
  for (let i = 0; i < emails.length; i += 25) await Promise.all(emails.slice(i, i + 25).map((e) => createUser(s, e)));
  const all = await scim('GET', `/Users?count=200&filter=${encodeURIComponent('userName ew "@bulk.example"')}`);
  t.equal(all.status, 200);
  t.equal(all.json().totalResults, 230, 'every one of them matched');
  t.equal(all.json().Resources.length, 200, 'one page of them');
  const rest = await scim('GET', `/Users?startIndex=201&count=200&filter=${encodeURIComponent('userName ew "@bulk.example"')}`);
  t.same(
    rest.json().Resources.map((u: { userName: string }) => u.userName),
    emails.slice(200),
    'the rest on the next page',
  );
  const last = await scim('GET', `/Users?filter=${encodeURIComponent('userName sw "zz-bulk-229" and active eq true')}`);
  t.same(
    last.json().Resources.map((u: { userName: string }) => u.userName),
    ['zz-bulk-229@bulk.example'],
    'the last user in the directory is found',
  );
});
