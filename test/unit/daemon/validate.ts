import t from 'tap';
import { XlurmError } from '@xlurm/protocol';
import { validateRequest } from '../../../packages/daemon/src/validate';

function code(msg: unknown): string {
  try {
    validateRequest(msg);
    return 'ok';
  } catch (e) {
    return e instanceof XlurmError ? e.code : `thrown ${(e as Error).name}`;
  }
}

t.test('numbers beyond what the daemon can use are INVALID_REQUEST, not internal errors later', async (t) => {
  for (const [op, args] of [
    ['log', { id: 1, offset: 1e300 }], ['log', { id: 1, offset: 2 ** 63 }], ['follow', { id: 1, offset: 2 ** 53 }],
    ['queue', { limit: 1e300 }], ['queue', { all: true, limit: 2 ** 64 }], ['get', { id: 1e300 }],
  ] as const) {
    t.equal(code({ v: 1, op, args }), 'INVALID_REQUEST', `${op} ${JSON.stringify(args)}`);
  }
  t.equal(code({ v: 1, op: 'log', args: { id: 1, offset: Number.MAX_SAFE_INTEGER } }), 'ok', 'the largest safe integer is accepted');
  t.equal(code({ v: 1, op: 'queue', args: { limit: Number.MAX_SAFE_INTEGER } }), 'ok');
});
