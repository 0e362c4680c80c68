// First-party plugin: the agent's way to read and edit the user's notes. Every call goes through
// ctx.services.notes, the notes service bound to the caller: another user's note is simply not
// found, and the token's scopes are checked there too (declared here for help and a clean 403).
import { definePlugin } from 'folio/sdk';
import { get } from './lib/get.ts';
import { list, search, tags, usage } from './lib/read.ts';
import { append, create, del, prepend, replace_section, restore, update } from './lib/write.ts';
import { restore_revision, revisions } from './lib/revisions.ts';
import { generate_report } from './lib/report.ts';
import { prepare_meeting, summarize_week } from './lib/prompts.ts';

export default definePlugin({
  namespace: 'notetaker',
  description: "The user's notes: list, read (in parts), search, write, edit safely with versions, undo, and reports.",
  catalogue: 'public',
  functions: {
    list,
    get,
    search,
    create,
    update,
    append,
    prepend,
    replace_section,
    delete: del,
    restore,
    revisions,
    restore_revision,
    tags,
    usage,
    generate_report,
  },
  prompts: { summarize_week, prepare_meeting },
});
