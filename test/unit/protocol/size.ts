import t from 'tap';
import { SIZE_PATTERN, formatSize, sizeBytes, sizeError } from '../../../packages/protocol/src/size';

const G = 1024 ** 3;

t.test('a number with an optional binary unit; a bare number is MiB', async (t) => {
  t.equal(sizeBytes('16G'), 16 * G);
  t.equal(sizeBytes('512M'), 512 * 1024 ** 2);
  t.equal(sizeBytes('1.5G'), 1.5 * G);
  t.equal(sizeBytes('2GiB'), 2 * G);
  t.equal(sizeBytes('2gb'), 2 * G);
  t.equal(sizeBytes('4k'), 4096);
  t.equal(sizeBytes('1T'), 1024 * G);
  t.equal(sizeBytes('100'), 100 * 1024 ** 2);
  t.equal(sizeBytes('0'), 0);
});

t.test('malformed text is null, with the message of docs/behaviour.md §20.1', async (t) => {
  for (const bad of ['', 'G', '16 G', '16X', '-1G', '1.G', '16GG', '16Gi', '1e3']) t.equal(sizeBytes(bad), null, JSON.stringify(bad));
  t.equal(sizeBytes('9'.repeat(20) + 'T'), null, 'beyond a safe integer');
  t.equal(sizeError('16X'), "invalid size '16X': use a number with K, M, G or T");
  t.ok(new RegExp(SIZE_PATTERN).test('1.5G'));
});

t.test('sizes as messages show them', async (t) => {
  t.equal(formatSize(16 * G), '16G');
  t.equal(formatSize(9.5 * G), '9.5G');
  t.equal(formatSize(512 * 1024 ** 2), '512M');
  t.equal(formatSize(16 * G, true), '16.0G');
  t.equal(formatSize(100), '100');
});
