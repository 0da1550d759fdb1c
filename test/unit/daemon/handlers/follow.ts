// handlers/follow.ts: state changes and log bytes until the job has a result.
import t from 'tap';
import * as fs from 'node:fs';
import { jobPaths } from '@xlurm/protocol';
import { follow } from '../../../../packages/daemon/src/handlers/follow';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, recordingOut, rootCaller, spec } from '../../../helpers/core';
import { waitFor } from '../../../helpers/wait';

t.test('another user is refused; the owner sees the job, its log, its end', async (t) => {
  const tc = await makeCore(t);
  const job = await tc.core.submit(alice, spec({ count: 1 })); // no device: stays pending until cancelled
  t.throws(() => follow(ctxOf(tc.core, bobCaller), { id: job.id }), { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to alice (UID 1000)' });
  fs.writeFileSync(jobPaths(tc.dir, job.id).log, 'early\n');
  const out = recordingOut();
  const done = follow(ctxOf(tc.core, aliceCaller), { id: job.id }).stream(out);
  await waitFor(() => out.frames.some((f) => f.event === 'log'), { what: 'log frame' });
  await tc.core.cancel(job.id);
  await done;
  t.match(out.frames[0], { ok: true, event: 'job', job: { id: job.id, state: 'PENDING' } });
  t.match(out.frames.filter((f) => f.event === 'log'), [{ offset: 0, raw: 'early\n' }]);
  t.match(out.frames.at(-1), { event: 'end', offset: 6, job: { state: 'CANCELLED', result: { exit_code: 130 } } });
});

t.test('bytes: false sends state changes only; root may follow any job', async (t) => {
  const tc = await makeCore(t);
  const job = await tc.core.submit(alice, spec({ count: 1 }));
  fs.writeFileSync(jobPaths(tc.dir, job.id).log, 'not sent\n');
  const out = recordingOut();
  const done = follow(ctxOf(tc.core, rootCaller), { id: job.id, bytes: false }).stream(out);
  await waitFor(() => out.frames.length > 0, { what: 'first frame' });
  await tc.core.cancel(job.id);
  await done;
  t.same(out.frames.filter((f) => f.event === 'log'), []);
  t.match(out.frames.at(-1), { event: 'end', job: { state: 'CANCELLED' } });
});

t.test('a client that goes away ends the stream', async (t) => {
  const tc = await makeCore(t);
  const job = await tc.core.submit(alice, spec({ count: 1 }));
  const out = recordingOut();
  const done = follow(ctxOf(tc.core, aliceCaller), { id: job.id }).stream(out);
  await waitFor(() => out.frames.length > 0, { what: 'first frame' });
  out.close();
  await done;
  t.notOk(out.frames.some((f) => f.event === 'end'));
  t.equal(tc.core.current(job.id)!.state, 'PENDING');
});
