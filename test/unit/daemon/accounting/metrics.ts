// accounting/metrics.ts: the Prometheus text (docs/behaviour.md §26.3) of a Core: exactly the
// documented families, every label set present, counters kept by the store, checked by promtool.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { metricsText, jobCounts } from '../../../../packages/daemon/src/accounting/metrics';
import { alice, makeCore, spec, startedBy } from '../../../helpers/core';
import { peerMissing } from '../../../helpers/tap';

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));

const lines = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

t.test('families, label sets and values', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const a = await tc.core.submit(alice, spec({ count: 2 }));
  await startedBy(tc, a.id);
  await tc.core.submit(alice, spec({ count: 1 }));
  const text = metricsText(tc.core, new Map([['nv:0', { utilization: 0.5, memoryUsed: 1024 }], ['nv:1', {}]]));
  const families = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
  t.same(families, [
    'xlurm_up gauge', 'xlurm_build_info gauge', 'xlurm_jobs gauge', 'xlurm_jobs_pending_by_reason gauge',
    'xlurm_device_status gauge', 'xlurm_device_utilization_ratio gauge', 'xlurm_device_memory_used_bytes gauge',
    'xlurm_user_device_seconds_total counter', 'xlurm_job_wait_seconds histogram', 'xlurm_scheduler_pass_seconds histogram',
  ]);
  t.match(text, /^xlurm_jobs\{state="RUNNING"\} 1$/m);
  t.match(text, /^xlurm_jobs\{state="PENDING"\} 1$/m);
  t.match(text, /^xlurm_jobs\{state="TIMED_OUT"\} 0$/m, 'every state, 0 where none');
  t.ok(lines(text, 'xlurm_jobs_pending_by_reason').length >= 12, 'every reason code and None');
  t.equal(lines(text, 'xlurm_jobs_pending_by_reason').filter((l) => !l.endsWith(' 0')).length, 1, 'one pending job, one reason');
  const status = lines(text, 'xlurm_device_status');
  const perDevice = (d: string) => status.filter((l) => l.includes(`device="${d}"`)).map((l) => /status="([^"]+)"/.exec(l)![1]);
  t.ok(perDevice('nv:0').length >= 7, 'every status of every device');
  t.same(perDevice('nv:1'), perDevice('nv:0'), 'the same statuses for each device');
  t.same(status.filter((l) => l.endsWith(' 1')), ['xlurm_device_status{device="nv:0",status="allocated"} 1', 'xlurm_device_status{device="nv:1",status="allocated"} 1']);
  t.same(lines(text, 'xlurm_device_utilization_ratio'), ['xlurm_device_utilization_ratio{device="nv:0"} 0.5'], 'only where reported');
  t.same(lines(text, 'xlurm_device_memory_used_bytes'), ['xlurm_device_memory_used_bytes{device="nv:0"} 1024']);
  t.match(text, /^xlurm_job_wait_seconds_bucket\{le="\+Inf"\} 1$/m, 'the started job waited');
  t.match(text, /^xlurm_job_wait_seconds_count 1$/m);
  t.match(text, /^xlurm_scheduler_pass_seconds_bucket\{le="\+Inf"\} (\d+)$/m);
  t.ok(text.endsWith('\n'));
  t.same(jobCounts(tc.core).PENDING, 1);
  if (!PROMTOOL) peerMissing(t, 'promtool not found (Debian package prometheus)');
  else {
    const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  }
});

t.test('device-seconds per user: finished jobs from the store, running ones up to now; cumulative buckets', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const a = await tc.core.submit(alice, spec({ count: 2 }));
  await startedBy(tc, a.id);
  const started = tc.core.current(a.id)!.started_at!;
  tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: started + 100, error: null });
  await tc.store.durable();
  const text = metricsText(tc.core, new Map());
  t.match(text, /^xlurm_user_device_seconds_total\{user="alice"\} 200$/m, '100 s on two devices');
  t.match(text, /^xlurm_jobs\{state="COMPLETED"\} 1$/m);
  const buckets = [...text.matchAll(/^xlurm_scheduler_pass_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)].map((m) => Number(m[2]));
  t.same([...buckets].sort((x, y) => x - y), buckets, 'cumulative');
});

t.test('label values are escaped', async (t) => {
  const tc = await makeCore(t);
  const odd = { uid: 1005, gid: 1005, name: 'a"b\\c' };
  const j = await tc.core.submit(odd, spec());
  await startedBy(tc, j.id);
  tc.core.complete(j.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null });
  await tc.store.durable();
  t.match(metricsText(tc.core, new Map()), /^xlurm_user_device_seconds_total\{user="a\\"b\\\\c"\} 0$/m);
});
