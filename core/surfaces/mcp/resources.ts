// Skill guides as MCP resources: skill://{namespace}/{name}, text/markdown, gated per caller by
// the same rule as /curl/skill (the namespace must be visible to the caller).
import { createHash } from 'node:crypto';
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { NamespaceEntry } from '../../kernel/registry.ts';
import type { SkillEntry } from '../../kernel/skills.ts';
import { NAMESPACE_RE, SKILL_RE } from '../../kernel/manifest.ts';

export const SKILL_MIME = 'text/markdown';

export function skillUri(namespace: string, name: string): string {
  return `skill://${namespace}/${name}`;
}

export function parseSkillUri(uri: string): { namespace: string; name: string } | undefined {
  const m = /^skill:\/\/([^/]+)\/([^/]+)$/.exec(uri);
  if (!m || !NAMESPACE_RE.test(m[1]!) || !SKILL_RE.test(m[2]!)) return undefined;
  return { namespace: m[1]!, name: m[2]! };
}

function resourceOf(skill: SkillEntry): Resource {
  return {
    uri: skillUri(skill.namespace, skill.name),
    name: `${skill.namespace}/${skill.name}`,
    title: `${skill.namespace}: ${skill.name.replaceAll('_', ' ')}`,
    description: skill.description,
    mimeType: SKILL_MIME,
    size: Buffer.byteLength(skill.markdown, 'utf8'),
  };
}

/** The guides of the namespaces this caller can see, in namespace then name order. */
export function listSkills(visible: NamespaceEntry[]): Resource[] {
  const out: Resource[] = [];
  for (const ns of visible) {
    for (const skill of [...ns.skills.values()].sort((a, b) => a.name.localeCompare(b.name))) out.push(resourceOf(skill));
  }
  return out;
}

export function fingerprintResources(resources: Resource[]): string {
  return createHash('sha1').update(JSON.stringify(resources)).digest('base64url');
}

export const SKILL_TEMPLATE: ResourceTemplate = {
  uriTemplate: 'skill://{namespace}/{name}',
  name: 'skill',
  title: 'Folio guide',
  description: "A guide for agents, by namespace; start with a namespace's how_it_works where there is one.",
  mimeType: SKILL_MIME,
};

export function readSkill(skill: SkillEntry): ReadResourceResult {
  return { contents: [{ uri: skillUri(skill.namespace, skill.name), mimeType: SKILL_MIME, text: skill.markdown }] };
}
