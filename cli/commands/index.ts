// The CLI's command groups, in the order `folio --help` lists them. Adding the commands of a REST
// group is one file under cli/commands/ exporting a CommandGroup (see notes.ts), and one line here.
import type { CommandGroup } from '../lib/group.ts';
import { admin } from './admin.ts';
import { apiCommand } from './api.ts';
import { audit } from './audit.ts';
import { auth } from './auth.ts';
import { completion } from './completion.ts';
import { exchange } from './exchange.ts';
import { files } from './files.ts';
import { notes } from './notes.ts';
import { plugin } from './plugin.ts';
import { search } from './search.ts';
import { tokens } from './tokens.ts';
import { transcribe } from './transcribe.ts';
import { users } from './users.ts';

export const GROUPS: CommandGroup[] = [
  notes,
  files,
  transcribe,
  search,
  exchange,
  tokens,
  users,
  admin,
  audit,
  apiCommand,
  plugin,
  auth,
  completion,
];
