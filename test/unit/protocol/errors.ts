import t from 'tap';
import { ERROR_CODES, XlurmError } from '../../../packages/protocol/src/errors';

t.test('error codes are unique and stable names', async (t) => {
  t.equal(new Set(ERROR_CODES).size, ERROR_CODES.length, 'no code twice');
  for (const c of ERROR_CODES) t.match(c, /^[A-Z][A-Z_]*[A-Z]$/, `${c}: upper case with underscores`);
  // Clients and scripts match on these: they never change name.
  for (const c of ['INVALID_REQUEST', 'UNKNOWN_OP', 'PERMISSION_DENIED', 'JOB_NOT_FOUND', 'INFEASIBLE', 'STORAGE', 'BUSY', 'INTERNAL']) {
    t.ok((ERROR_CODES as readonly string[]).includes(c), `${c} is a code`);
  }
});

t.test('XlurmError carries its code and message to the wire', async (t) => {
  const e = new XlurmError('JOB_NOT_FOUND', 'job 7 not found');
  t.ok(e instanceof Error);
  t.equal(e.name, 'XlurmError');
  t.equal(e.code, 'JOB_NOT_FOUND');
  t.equal(e.message, 'job 7 not found');
  t.same(e.toWire(), { code: 'JOB_NOT_FOUND', message: 'job 7 not found' });
  t.same(Object.keys(e.toWire()).sort(), ['code', 'message'], 'nothing else (no stack) goes out');
});
