// The vendors compiled into this build (devices/register.ts): every kind gets its module's factory.
import t from 'tap';
import { KINDS } from '@xlurm/protocol';
import { FACTORIES } from '../../../../packages/daemon/src/devices/discovery';
import { registerBackends } from '../../../../packages/daemon/src/devices/register';
import { ascend } from '../../../../packages/daemon/src/devices/ascend';
import { hcu } from '../../../../packages/daemon/src/devices/hcu';
import { metax } from '../../../../packages/daemon/src/devices/metax';
import { mthreads } from '../../../../packages/daemon/src/devices/mthreads';
import { nvidia } from '../../../../packages/daemon/src/devices/nvidia';
import { ppu } from '../../../../packages/daemon/src/devices/ppu';

t.test('every vendor is registered under its own kind', async (t) => {
  t.same(Object.keys(FACTORIES), [], 'nothing before registration');
  registerBackends();
  t.same(Object.keys(FACTORIES).sort(), [...KINDS].sort());
  t.equal(FACTORIES.nvidia, nvidia);
  t.equal(FACTORIES.ascend, ascend);
  t.equal(FACTORIES.mthreads, mthreads);
  t.equal(FACTORIES.metax, metax);
  t.equal(FACTORIES.ppu, ppu);
  t.equal(FACTORIES.hcu, hcu);
  registerBackends();
  t.equal(Object.keys(FACTORIES).length, KINDS.length, 'registering twice changes nothing');
});
