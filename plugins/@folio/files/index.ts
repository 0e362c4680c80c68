// First-party plugin: the user's files for agents and scripts. Every call goes through
// ctx.services.files, the files service bound to the caller: another user's file is simply not
// found, and the token's scopes are checked there too (declared here for help and a clean 403).
import { definePlugin } from 'folio/sdk';
import { download, info, list, read, text } from './lib/read.ts';
import { attach, attachments, del, restore, revoke_share, share, shares, write } from './lib/write.ts';

export default definePlugin({
  namespace: 'files',
  description: "The user's files: list, read text in parts, download, write small text files, attach to notes, share by link.",
  catalogue: 'public',
  functions: { list, info, read, text, download, write, attach, attachments, delete: del, restore, share, shares, revoke_share },
});
