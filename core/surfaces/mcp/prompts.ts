// Plugins' prompts as MCP prompts, named {namespace}__{prompt} like tools, gated like everything
// else: a namespace the caller cannot see has no prompts for them, and getting one of its prompts
// is the same "unknown prompt" error as getting one that does not exist.
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import type { PromptEntry } from '../../kernel/manifest.ts';
import type { NamespaceEntry } from '../../kernel/registry.ts';
import { toolName } from './tools.ts';

export function promptOf(p: PromptEntry): Prompt {
  return {
    name: toolName(p.namespace, p.name),
    ...(p.title ? { title: p.title } : {}),
    description: p.description,
    // What completion uses (values, suggest) stays on the server.
    ...(p.arguments.length > 0
      ? {
          arguments: p.arguments.map((a) => ({
            name: a.name,
            ...(a.description !== undefined ? { description: a.description } : {}),
            ...(a.required ? { required: true } : {}),
          })),
        }
      : {}),
  };
}

/** The most completion values one answer carries (the protocol's limit). */
export const COMPLETION_MAX = 100;

/** Candidates starting with `typed` (ignoring case), in the order given, at most COMPLETION_MAX. */
export function completeFrom(candidates: string[], typed: string): { values: string[]; total: number; hasMore: boolean } {
  const prefix = typed.toLowerCase();
  const all = candidates.filter((c) => c.toLowerCase().startsWith(prefix));
  return { values: all.slice(0, COMPLETION_MAX), total: all.length, hasMore: all.length > COMPLETION_MAX };
}

/** The values a prompt argument may be completed from: its declared values, or the caller's tags (most used first). */
export function argumentCandidates(p: PromptEntry, argument: string, tags: Record<string, number>): string[] {
  const a = p.arguments.find((x) => x.name === argument);
  if (!a) return [];
  if (a.values) return a.values;
  if (a.suggest === 'tags')
    return Object.entries(tags)
      .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
      .map(([t]) => t);
  return [];
}

/** The prompts of the namespaces this caller can see, in namespace then name order. */
export function listPrompts(visible: NamespaceEntry[]): Prompt[] {
  const out: Prompt[] = [];
  for (const ns of visible) for (const p of [...ns.prompts.values()].sort((a, b) => a.name.localeCompare(b.name))) out.push(promptOf(p));
  return out;
}

/** What is wrong with the arguments a client sent for this prompt, or undefined. */
export function promptArgumentsProblem(p: PromptEntry, args: Record<string, string>): string | undefined {
  const known = new Set(p.arguments.map((a) => a.name));
  const unknown = Object.keys(args).filter((k) => !known.has(k));
  if (unknown.length > 0)
    return `${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'is not an argument' : 'are not arguments'} of this prompt (it takes: ${[...known].join(', ') || 'none'})`;
  const missing = p.arguments.filter((a) => a.required && (args[a.name] === undefined || args[a.name] === '')).map((a) => a.name);
  if (missing.length > 0) return `missing required argument${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`;
  return undefined;
}

export function promptResult(p: PromptEntry, text: string): GetPromptResult {
  return { description: p.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}
