import t from 'tap';
import { waitJob, waitJobs, type WaitDeps } from '../../../packages/cli/src/wait';
import { ConnectError } from '../../../packages/cli/src/client';

/** A `follow` stream that ends each job with its code a loop turn later; counts streams open at once. */
function fake(codes: Record<number, number>, opts: { failFirst?: number } = {}) {
  let open = 0;
  let most = 0;
  let fails = opts.failFirst ?? 0;
  const asked: unknown[] = [];
  const stream = (async (_op: string, args: { id: number; bytes?: boolean }) => {
    asked.push(args);
    if (fails > 0) { fails--; throw new ConnectError('daemon away'); }
    open++; most = Math.max(most, open);
    await new Promise((r) => setImmediate(r)); // a turn of the loop: streams opened together overlap
    open--;
    if (!(args.id in codes)) return { job: null };
    return { job: { id: args.id, result: { exit_code: codes[args.id] } } };
  }) as unknown as WaitDeps['stream'];
  return { deps: { stream, request: (async () => ({})) as unknown as WaitDeps['request'], retryEveryMs: 1 }, most: () => most, asked };
}

t.test('one job: its exit code, from a stream of state changes only', async (t) => {
  const f = fake({ 7: 3 });
  t.equal(await waitJob(7, f.deps), 3);
  t.same(f.asked, [{ id: 7, bytes: false }]);
});

t.test('several: the first non-zero code in argument order, else 0', async (t) => {
  t.equal(await waitJobs([1, 2, 3], fake({ 1: 0, 2: 5, 3: 4 }).deps), 5);
  t.equal(await waitJobs([3, 2], fake({ 2: 5, 3: 4 }).deps), 4);
  t.equal(await waitJobs([1, 2], fake({ 1: 0, 2: 0 }).deps), 0);
});

t.test("an array's many tasks are waited for through a bounded number of streams", async (t) => {
  const codes: Record<number, number> = {};
  for (let i = 1; i <= 200; i++) codes[i] = i === 150 ? 9 : 0;
  const f = fake(codes);
  t.equal(await waitJobs(Object.keys(codes).map(Number), f.deps), 9);
  t.ok(f.most() <= 32, `at most 32 at once (saw ${f.most()})`);
});

t.test('a daemon away for a moment is waited out; an unknown job is an error', async (t) => {
  t.equal(await waitJob(4, fake({ 4: 2 }, { failFirst: 3 }).deps), 2);
  await t.rejects(waitJob(5, fake({}).deps), { message: 'job not found' });
});
