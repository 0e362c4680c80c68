// First-party plugin: meetings. A namespace only for users who keep meeting notes: it appears once
// the user owns a live note tagged `meeting` (caller.notes counts them for every request) and goes
// away when they no longer do. An operator can still force it on or off per user
// (admin.set_namespace_access). Works entirely through ctx.services.notes, as the caller.
import { definePlugin } from 'folio/sdk';
import { action_items, mark_done } from './lib/items.ts';
import { digest } from './lib/digest.ts';
import { MEETING_TAG } from './lib/scan.ts';

export default definePlugin({
  namespace: 'meetings',
  description: 'Your meeting notes (tagged meeting): open action items, checking them off, and a digest of recent meetings.',
  // Not in the public catalogue: a namespace gated on what a user owns is not advertised to all.
  catalogue: 'unlisted',
  visible: (caller) => (caller.notes.tags[MEETING_TAG] ?? 0) > 0,
  functions: { action_items, mark_done, digest },
});
