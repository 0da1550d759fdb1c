// handlers/index.ts: one handler per operation of the protocol, no more, no less.
import t from 'tap';
import { Ops } from '@xlurm/protocol/dist/schemas';
import { handlers } from '../../../../packages/daemon/src/handlers';

t.test('the handler table covers exactly the protocol operations', async (t) => {
  t.same(Object.keys(handlers).sort(), Object.keys(Ops).sort());
  for (const [op, h] of Object.entries(handlers)) t.type(h, 'function', op);
});
