/**
 * `slurm-config [--json] [daemon options]` of daemonMain (docs/behaviour.md §27.2): discovery as
 * the daemon would run it (the same --backend, --config and exclusions), then the Slurm node's
 * configuration printed; no daemon needs to run, nothing is kept open.
 */
import type { DeviceKind } from '@xlurm/protocol';
import { parseKind } from '@xlurm/protocol';
import { parseDaemonArgs } from './config/args';
import { configPath, loadDaemonConfig } from './config/daemon';
import { readConfigFile } from './config/load';
import { discover } from './devices/discovery';
import { registerBackends } from './devices/register';
import type { Backend } from './devices/backend';
import { slurmConfig } from './slurm-config';

export function slurmConfigMain(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s)): number {
  const json = argv.includes('--json');
  const args = parseDaemonArgs(argv.filter((a) => a !== '--json'));
  const where = configPath(args, process.env);
  const cfg = loadDaemonConfig(args, where);
  const settings = readConfigFile(where.file, where.named).settings as { cluster?: { gres?: Record<string, string> } };
  const gres: Partial<Record<DeviceKind, string>> = {};
  for (const [label, name] of Object.entries(settings.cluster?.gres ?? {})) {
    const kind = parseKind(label);
    if (kind) gres[kind] = name;
  }
  registerBackends();
  // Under `auto` the vendors that are absent are no news, unless none was found at all.
  const skipped: string[] = [];
  const backends = discover(cfg.backend, process.env, (msg) => skipped.push(msg));
  if (backends.length === 0) for (const msg of skipped) process.stderr.write(`xlurm: ${msg}\n`);
  try {
    const excluded = new Set(cfg.excludeIds);
    // Devices xlurm keeps out of use (exclude_device_ids) are kept out of Slurm's configuration too.
    const kept: Backend[] = backends.map((b) => Object.assign(Object.create(b) as Backend, { devices: b.devices.filter((d) => !excluded.has(d.id)) }));
    const c = slurmConfig({ backends: kept, gres });
    if (json) out(JSON.stringify(c, null, 2) + '\n');
    else out(`# slurm.conf (GresTypes must list every GRES name used below)\nGresTypes=${[...new Set(c.node_line.match(/Gres=(\S+)/)?.[1]?.split(',').map((g) => g.split(':')[0]!) ?? [])].join(',') || '(none)'}\n${c.node_line}\n\n# gres.conf\n${c.gres_conf}\n# TaskProlog script (slurm.conf: TaskProlog=/etc/slurm/xlurm-task-prolog)\n${c.task_prolog}`);
    return 0;
  } finally {
    for (const b of backends) b.close();
  }
}
