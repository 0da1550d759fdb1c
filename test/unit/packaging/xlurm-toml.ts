// The packaged configuration file lists every table and key the daemon knows (extensions 28.11),
// commented out, so a new administrator sees all of them: checked against the schema itself, so a
// key added to the schema without a line here fails.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigSchema } from '../../../packages/daemon/src/config/schema';
import { KIND_LABEL } from '@xlurm/protocol';
import { checkConfigText } from '../../../packages/daemon/src/config/load';

const FILE = path.join(__dirname, '..', '..', '..', 'packaging', 'xlurm.toml');
const text = fs.readFileSync(FILE, 'utf8');
const lines = text.split('\n');

const LABELS = new Set<string>(Object.values(KIND_LABEL));

interface Props { properties?: Record<string, Props> }
const propsOf = (s: unknown) => (s as Props).properties ?? {};

/** A `[table]` header, set or commented out. */
const hasTable = (dotted: string) => lines.some((l) => l.replace(/^#/, '') === `[${dotted}]` || l.replace(/^#/, '').startsWith(`[${dotted}.`));
/** A commented `key = default`, or a sub-table of that name. */
const hasKey = (table: string, key: string) => lines.some((l) => l.startsWith(`#${key} = `)) || hasTable(`${table}.${key}`);

t.test('every table and key of the schema, commented', async (t) => {
  for (const [table, schema] of Object.entries(propsOf(ConfigSchema))) {
    t.ok(hasTable(table), `[${table}]`);
    for (const [key, sub] of Object.entries(propsOf(schema))) {
      t.ok(hasKey(table, key), `${table}.${key}`);
      const subKeys = Object.keys(propsOf(sub));
      // A map by vendor label ([devices.groups], gres) has examples, not one line per vendor.
      if (subKeys.every((k) => LABELS.has(k))) continue;
      for (const subKey of subKeys) {
        t.ok(lines.some((l) => l.startsWith(`#${subKey} = `)), `${table}.${key}.${subKey}`);
      }
    }
  }
  t.notMatch(text, /knows only the \[daemon\] table/, 'no claim that only [daemon] exists');
});

t.test('as installed it is valid and sets nothing', async (t) => {
  const { settings } = checkConfigText('xlurm.toml', text.replace('@ENV_FILE@', '/etc/default/xlurm'));
  for (const [table, v] of Object.entries(settings)) t.same(Object.keys(v as object).filter((k) => k !== 'groups'), [], `[${table}] sets no key`);
});
