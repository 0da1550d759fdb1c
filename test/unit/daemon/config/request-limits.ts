// config/request-limits.ts (docs/behaviour.md §28.2): the defaults, the refusals' words, and config check's
// refusal of a max_request_bytes that no request could reach (the protocol's frame limit).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_REQUEST_BYTES } from '@xlurm/protocol';
import {
  arrayTooLarge, requestBytes, requestLimitsOf, requestLimitsProblems, requestTooLarge,
} from '../../../../packages/daemon/src/config/request-limits';
import { readConfigFile } from '../../../../packages/daemon/src/config/load';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';

const M = 1024 * 1024;

t.test('defaults, sizes and 0', async (t) => {
  t.same(requestLimitsOf(undefined), { maxArrayTasks: 10000, maxRequestBytes: 3 * M });
  t.same(requestLimitsOf({ max_array_tasks: 0, max_request_bytes: '512K' }), { maxArrayTasks: 0, maxRequestBytes: 512 * 1024 });
  t.same(requestLimitsOf({ max_request_bytes: 1000 }), { maxArrayTasks: 10000, maxRequestBytes: 1000 }, 'an integer is bytes');
});

t.test('the words of the refusals', async (t) => {
  t.equal(requestTooLarge(Math.round(3.2 * M), 3 * M), 'request too large: 3.2M (limit max_request_bytes 3M)');
  t.equal(requestTooLarge(3 * M, 3 * M), null, 'the limit itself is allowed');
  t.equal(requestTooLarge(100 * M, 0), null, '0: unlimited');
  t.equal(arrayTooLarge(10001, 10000), 'an array may have at most 10000 tasks (limit max_array_tasks)');
  t.equal(arrayTooLarge(10000, 10000), null);
  t.equal(arrayTooLarge(100000, 0), null, "0: the protocol's own cap");
  t.equal(requestBytes({ env: { AB: 'cd', é: 'x' }, script: 'abc', command: ['12', '3'] }), 5 + 4 + 3 + 3, 'NAME=value each, in UTF-8');
});

t.test('config check refuses a value at or above the frame limit', async (t) => {
  t.same(requestLimitsProblems({ limits: { max_request_bytes: '3.9M' } }), []);
  t.same(requestLimitsProblems({ limits: { max_request_bytes: 0 } }), []);
  t.same(requestLimitsProblems({ limits: { max_request_bytes: MAX_REQUEST_BYTES } }), [{
    key: 'limits.max_request_bytes', problem: `must be below the protocol's frame limit 4M, not ${MAX_REQUEST_BYTES} (0: the frame limit alone)`,
  }]);
  const dir = t.testdir();
  const file = path.join(dir, 'x.toml');
  fs.writeFileSync(file, '[limits]\nmax_array_tasks = 100001\nmax_request_bytes = "4M"\n');
  t.throws(() => readConfigFile(file, true), { message: `${file}:2: limits.max_array_tasks: must be at most 100000, not 100001` });
  fs.writeFileSync(file, '[limits]\nmax_array_tasks = 50\n\nmax_request_bytes = "4M"\n');
  t.throws(() => readConfigFile(file, true), { message: `${file}:4: limits.max_request_bytes: must be below the protocol's frame limit 4M, not 4M (0: the frame limit alone)` });
  fs.writeFileSync(file, '[limits]\nmax_array_tasks = 50\nmax_request_bytes = "2M"\n');
  const c = loadDaemonConfig(parseDaemonArgs([]), { file, named: true });
  t.equal(c.maxArrayTasks, 50);
  t.equal(c.maxRequestBytes, 2 * M);
});
