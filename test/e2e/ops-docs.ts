// README_zh.md is kept in step with README.md: the same sections, the same
// commands in its examples, and links to the same documents.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/env';

const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');
const en = read('README.md');
const zh = read('README_zh.md');

/** The commands of every code block, comments dropped. */
const commands = (md: string) => [...md.matchAll(/```[a-z]*\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1]!.split('\n')).map((l) => l.replace(/\s+#.*$/, '').trimEnd()).filter(Boolean);
/** Inline commands of the form `xlurm …` / `./install.sh …` / `XLURM_HOME=… …`. */
const inline = (md: string) => [...md.matchAll(/`((?:\.\/install\.sh|xlurm|XLURM_HOME=|PREFIX=)[^`]*)`/g)].map((m) => m[1]).sort();
const links = (md: string) => [...md.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]).filter((l) => !/^README/.test(l)).sort();
const sections = (md: string) => (md.match(/^## /gm) ?? []).length;

t.same(commands(zh), commands(en), 'the same commands in the code blocks');
t.same(inline(zh), inline(en), 'the same inline commands');
t.same(links(zh), links(en), 'links to the same documents');
t.equal(sections(zh), sections(en), 'the same number of sections');
t.match(en, '[README_zh.md](README_zh.md)');
t.match(zh, '[README.md](README.md)');
