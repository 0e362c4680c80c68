import { pino } from 'pino';
import { mkdtemp, rm } from 'node:fs/promises';
import { openDatabase } from '../../../core/db/database.ts';
import { IdentityService } from '../../../core/domain/identity/service.ts';
import { NotesServiceImpl } from '../../../core/domain/notes/service.ts';
const dir = await mkdtemp('/tmp/nb/data-');
const url = process.argv[2];
const db = await openDatabase({ dataDir: dir, log: pino({ level: 'silent' }), databaseUrl: url });
const identity = new IdentityService(db);
const user = await identity.createUser({ email: 'x@example.com' });
const principal = { user: { id: user.id } } as any;
const notes = new NotesServiceImpl(db);
const body = (
  '## Notes\n\n' +
  'the quick brown fox jumps over the lazy dog and some more words about the project meeting budget '.repeat(12) +
  '\n- [ ] do this\n'
).repeat(2);
let t0 = performance.now();
for (let i = 0; i < 300; i++) await notes.create(principal, { title: 'note ' + i, body: body + i, tags: ['meeting', 'x' + (i % 7)] });
console.log('sequential ms/create', ((performance.now() - t0) / 300).toFixed(2));
t0 = performance.now();
const n = 400;
for (let i = 0; i < n; i += 8)
  await Promise.all(Array.from({ length: 8 }, (_, k) => notes.create(principal, { title: 'p ' + i, body: body + (i + k), tags: ['a'] })));
console.log('parallel8 ms/create', ((performance.now() - t0) / n).toFixed(2));
await db.close();
await rm(dir, { recursive: true });
