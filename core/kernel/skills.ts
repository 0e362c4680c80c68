// Skill guides: markdown files with Agent Skills front matter (`name`, `description`).
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { SKILL_RE } from './manifest.ts';

export interface SkillEntry {
  namespace: string;
  name: string;
  description: string;
  /** The whole file, front matter included, as an agent expects a skill file to look. */
  markdown: string;
  file: string;
}

export class SkillError extends Error {}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

export function parseSkill(namespace: string, file: string, text: string): SkillEntry {
  const base = path.basename(file, '.md');
  const m = FRONT_MATTER.exec(text);
  if (!m) throw new SkillError(`${file}: missing front matter (---\\nname: ${base}\\ndescription: ...\\n---)`);
  let meta: unknown;
  try {
    meta = parseYaml(m[1] ?? '');
  } catch (err) {
    throw new SkillError(`${file}: front matter is not valid YAML: ${(err as Error).message}`);
  }
  if (typeof meta !== 'object' || meta === null) throw new SkillError(`${file}: front matter must be a mapping`);
  const { name, description } = meta as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') throw new SkillError(`${file}: front matter needs a name`);
  if (name !== base) throw new SkillError(`${file}: front matter name '${name}' must match the file name '${base}'`);
  if (!SKILL_RE.test(name)) throw new SkillError(`${file}: skill name must match ${SKILL_RE.source}`);
  if (typeof description !== 'string' || description.trim() === '') throw new SkillError(`${file}: front matter needs a description`);
  return { namespace, name, description: description.trim(), markdown: text, file };
}

/** Reads every `*.md` directly inside `dir`. Throws on the first bad one. */
export function readSkillDir(namespace: string, dir: string): Map<string, SkillEntry> {
  const skills = new Map<string, SkillEntry>();
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return skills;
  for (const entry of readdirSync(dir).sort()) {
    if (!entry.endsWith('.md') || entry.startsWith('.')) continue;
    const file = path.join(dir, entry);
    const skill = parseSkill(namespace, file, readFileSync(file, 'utf8'));
    skills.set(skill.name, skill);
  }
  return skills;
}
