// meetings.action_items and meetings.mark_done: the open `- [ ]` items of meeting notes, and
// checking one off as a versioned edit of its note.
import { Type } from 'typebox';
import { actionItems, BadArguments, checkItem, Conflict, defineFunction, openItems, type Context, type Note } from 'folio/sdk';
import { clip, meetingDate } from './markdown.ts';
import { decode, encode, MEETING_TAG, scan, type Position } from './scan.ts';
import { Cursor, NoteId, READ, WRITE } from './schemas.ts';

const BUDGET = 40_000;
const EXAMPLE_ID = '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11';

interface Group {
  note_id: string;
  title: string;
  date: string;
  version: number;
  items: Array<{ line: number; text: string }>;
}

async function meetingNote(ctx: Context, id: string): Promise<Note> {
  const note = await ctx.services.notes.get(id);
  if (!note.tags.includes(MEETING_TAG))
    throw new BadArguments(`note ${id} is not a meeting note`, [
      { path: 'note_id', message: `is not tagged ${MEETING_TAG}; edit other notes with notetaker` },
    ]);
  return note;
}

// ---- action_items -----------------------------------------------------------------------------

const ItemsArgs = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Open items per answer, at most 200.' })),
  cursor: Type.Optional(Cursor),
  note_id: Type.Optional(NoteId('Only the items of this meeting note.')),
});

export const action_items = defineFunction({
  title: 'Open action items',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'The open action items (`- [ ] ...` lines) of your meeting notes (notes tagged meeting), grouped by note, most recently updated note first. ' +
    'Each item has its line number in the note; each note its id and version: mark one done with meetings.mark_done {note_id, line, expected_version: version}. ' +
    'When next_cursor is not null there are more: call again with cursor = next_cursor.',
  args: ItemsArgs,
  returns: Type.Object({
    meetings: Type.Array(
      Type.Object({
        note_id: Type.String(),
        title: Type.String(),
        date: Type.String(),
        version: Type.Integer(),
        items: Type.Array(Type.Object({ line: Type.Integer(), text: Type.String() })),
      }),
    ),
    open_items: Type.Integer({ description: 'Items in this answer.' }),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    more: Type.Optional(Type.String()),
  }),
  examples: [
    { args: {}, description: 'all open items' },
    { args: { note_id: EXAMPLE_ID }, description: 'one meeting' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    const limit = args.limit ?? 50;
    const groups: Group[] = [];
    let count = 0;
    let size = 0;
    /** Adds the items of one note after `afterLine`; the line to resume after when it stops half-way. */
    const take = (note: Note, afterLine: number): { stoppedAt: number | null } => {
      const open = openItems(note.body).filter((i) => i.line > afterLine);
      if (open.length === 0) return { stoppedAt: null };
      const group: Group = {
        note_id: note.id,
        title: clip(note.title, 120),
        date: meetingDate(note.title, note.body, note.created_at),
        version: note.version,
        items: [],
      };
      size += Buffer.byteLength(JSON.stringify(group));
      for (const item of open) {
        const row = { line: item.line, text: clip(item.text, 300) };
        const b = Buffer.byteLength(JSON.stringify(row)) + 1;
        if (count >= limit || (count > 0 && size + b > BUDGET)) {
          if (group.items.length > 0) groups.push(group);
          return { stoppedAt: group.items.at(-1)?.line ?? Math.max(afterLine, 0) };
        }
        group.items.push(row);
        count++;
        size += b;
      }
      groups.push(group);
      return { stoppedAt: null };
    };

    let next: Position | null;
    if (args.note_id !== undefined) {
      const note = await meetingNote(ctx, args.note_id);
      const from = decode(args.cursor);
      const { stoppedAt } = take(note, from.n === note.id ? from.l : -1);
      next = stoppedAt === null ? null : { c: null, u: null, n: note.id, l: stoppedAt };
    } else {
      ({ next } = await scan(ctx, decode(args.cursor), ({ note, afterLine }, here) => {
        const { stoppedAt } = take(note, afterLine);
        if (stoppedAt !== null) return here(stoppedAt);
        return count >= limit ? 'stop' : 'next';
      }));
    }
    const next_cursor = next ? encode(next) : null;
    return {
      meetings: groups,
      open_items: count,
      next_cursor,
      ...(next_cursor
        ? {
            more: `There may be more open items: call ${ctx.ref('meetings.action_items')} again with the same arguments and cursor = next_cursor.`,
          }
        : {}),
    };
  },
});

// ---- mark_done --------------------------------------------------------------------------------

const DoneArgs = Type.Object({
  note_id: NoteId('The meeting note (note_id from action_items).'),
  line: Type.Integer({ minimum: 1, description: 'The line of the open item in the note (line from action_items).' }),
  expected_version: Type.Integer({
    minimum: 1,
    description:
      'The note version action_items gave. If the note changed since, nothing is written and you get 409 with the current version and open items.',
  }),
});

function stale(note: Note, expected: number, ref: Context['ref']): Conflict {
  return new Conflict(
    `note ${note.id} is now at version ${note.version}, not version ${expected}: it changed after you read it, and nothing was written. ` +
      `Its lines may have moved: check the open items below (or ${ref('meetings.action_items', { note_id: note.id })}) and retry with expected_version ${note.version}.`,
    {
      note_id: note.id,
      version: note.version,
      title: note.title,
      updated_at: note.updated_at,
      open_items: openItems(note.body)
        .slice(0, 30)
        .map((i) => ({ line: i.line, text: clip(i.text, 200) })),
    },
  );
}

export const mark_done = defineFunction({
  title: 'Mark an action item done',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    'Mark one open action item of a meeting note done: its `- [ ]` becomes `- [x]`, as an edit of the note (its version goes up by one). ' +
    'Needs the note version you read (expected_version): if the note changed since, nothing is written and you get 409 with the current version and open items.',
  args: DoneArgs,
  returns: Type.Object({
    note_id: Type.String(),
    line: Type.Integer(),
    text: Type.String(),
    done: Type.Boolean(),
    version: Type.Integer({ description: 'The note version after the edit.' }),
    open_items_left: Type.Integer(),
  }),
  examples: [{ args: { note_id: EXAMPLE_ID, line: 12, expected_version: 3 } }],
  requires: WRITE,
  handler: async (args, ctx) => {
    const note = await meetingNote(ctx, args.note_id);
    if (note.version !== args.expected_version) throw stale(note, args.expected_version, ctx.ref);
    const body = checkItem(note.body, args.line);
    if (body === null) {
      const lines = note.body.split('\n');
      const found = actionItems(note.body).find((i) => i.line === args.line);
      const why =
        args.line > lines.length
          ? `the note has ${lines.length} lines`
          : found?.done
            ? `that item is already done: "${clip(found.text, 120)}"`
            : `line ${args.line} is not an open action item; it reads "${clip(lines[args.line - 1]!.replace(/\r$/, ''), 120)}"`;
      throw new BadArguments(`nothing to mark done on line ${args.line}`, [{ path: 'line', message: why }]);
    }
    let updated: Note;
    try {
      updated = await ctx.services.notes.update(note.id, { expected_version: args.expected_version, body });
    } catch (err) {
      if (!(err instanceof Conflict)) throw err;
      // Lost a race since we read it, or the note is in the trash.
      const current = await ctx.services.notes.get(note.id);
      if (current.version !== args.expected_version) throw stale(current, args.expected_version, ctx.ref);
      throw new Conflict(err.message, { note_id: current.id, version: current.version, deleted_at: current.deleted_at });
    }
    const item = actionItems(note.body).find((i) => i.line === args.line)!;
    return {
      note_id: updated.id,
      line: args.line,
      text: item.text,
      done: true,
      version: updated.version,
      open_items_left: openItems(updated.body).length,
    };
  },
});
