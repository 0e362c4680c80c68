// The child side of ChildRunner (child-runner.ts): loads the module named by its argument and answers
// each message from the parent with what the module's default export returns for it. It ends when
// the parent goes away (the IPC channel closes), so a server that dies leaves no child behind.
const target = process.argv[2];
if (!target || !process.send) throw new Error('child-runner-entry: run by ChildRunner, with a module URL');
const send = process.send.bind(process);
const mod = (await import(target)) as { default?: unknown };
const handle = mod.default;
if (typeof handle !== 'function') throw new Error(`child-runner-entry: ${target} has no default export function`);

process.on('disconnect', () => process.exit(0));
process.on('message', (msg: { id: number; input: unknown }) => {
  void (async () => {
    try {
      const output: unknown = await (handle as (input: unknown) => unknown)(msg.input);
      send({ id: msg.id, output });
    } catch (err) {
      send({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
    }
  })();
});
send({ type: 'ready' });
