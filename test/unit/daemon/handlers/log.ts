// handlers/log.ts: the log from an offset to its current end, to its owner and root only.
import t from 'tap';
import * as fs from 'node:fs';
import { jobPaths } from '@xlurm/protocol';
import { log } from '../../../../packages/daemon/src/handlers/log';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, recordingOut, rootCaller, spec } from '../../../helpers/core';

t.test('owner and root read the log; another user is refused before any stream', async (t) => {
  const tc = await makeCore(t);
  const job = await tc.core.submit(alice, spec({ count: 1 })); // no device: stays pending
  fs.writeFileSync(jobPaths(tc.dir, job.id).log, 'line one\nline two\n');
  t.throws(() => log(ctxOf(tc.core, bobCaller), { id: job.id }), { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to alice (UID 1000)' });
  t.throws(() => log(ctxOf(tc.core, bobCaller), { id: job.id + 1 }), { code: 'JOB_NOT_FOUND', message: 'job not found' });
  for (const caller of [aliceCaller, rootCaller]) {
    const reply = log(ctxOf(tc.core, caller), { id: job.id, offset: 5 });
    const out = recordingOut();
    await reply.stream(out);
    t.match(out.frames, [{ ok: true, event: 'log', offset: 5, raw: 'one\nline two\n' }, { ok: true, event: 'end', job: null, offset: 18 }]);
  }
});

t.test('no log yet: just the end, at the offset asked for', async (t) => {
  const tc = await makeCore(t);
  const job = await tc.core.submit(alice, spec({ count: 1 }));
  const out = recordingOut();
  await log(ctxOf(tc.core, aliceCaller), { id: job.id }).stream(out);
  t.match(out.frames, [{ event: 'end', job: null, offset: 0 }]);
  t.equal(out.frames.length, 1);
});
