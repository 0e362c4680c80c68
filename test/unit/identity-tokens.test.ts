import t from 'tap';
import { TOKEN_LENGTH, generateToken, hashToken, parseToken } from '../../core/domain/identity/tokens.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

t.test('generated tokens have the right shape and parse back', async (t) => {
  for (const [kind, prefix] of [
    ['api', 'folio_api_'],
    ['minted', 'folio_mnt_'],
    ['oauth', 'folio_oat_'],
  ] as const) {
    const token = generateToken(kind);
    t.equal(token.length, TOKEN_LENGTH, `${kind}: length`);
    t.equal(token.length, 48);
    t.ok(token.startsWith(prefix), `${kind}: prefix`);
    t.match(token.slice(prefix.length), /^[0-9A-Za-z]{38}$/, `${kind}: base62 body`);
    t.same(parseToken(token), { kind }, `${kind}: parses`);
  }
  const many = new Set(Array.from({ length: 200 }, () => generateToken('api')));
  t.equal(many.size, 200, 'no repeats');
});

t.test('parseToken rejects without any I/O', async (t) => {
  const good = generateToken('api');
  t.equal(parseToken(good.replace('folio_api_', 'folio_xyz_')), null, 'unknown prefix');
  t.equal(parseToken(good.replace('folio_api_', 'folio_mnt_')), null, 'prefix swapped: checksum covers it');
  t.equal(parseToken(good.replace('folio_api_', 'ghp_')), null, 'foreign prefix');
  t.equal(parseToken(good.slice(0, -1)), null, 'too short');
  t.equal(parseToken(good + 'a'), null, 'too long');
  t.equal(parseToken(''), null, 'empty');
  t.equal(parseToken(good.slice(0, 20) + '-' + good.slice(21)), null, 'bad charset');

  // flip one character of the random part to another base62 character: the checksum must catch it
  for (const pos of [10, 25, 41]) {
    const c = good[pos]!;
    const other = BASE62[(BASE62.indexOf(c) + 1) % 62]!;
    const flipped = good.slice(0, pos) + other + good.slice(pos + 1);
    t.equal(parseToken(flipped), null, `flipped char at ${pos}`);
  }
  // and in the checksum itself
  const last = good.at(-1)!;
  t.equal(parseToken(good.slice(0, -1) + BASE62[(BASE62.indexOf(last) + 7) % 62]), null, 'flipped checksum char');
});

t.test('hashToken is hex sha-256', async (t) => {
  t.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.match(hashToken(generateToken('api')), /^[0-9a-f]{64}$/);
});
