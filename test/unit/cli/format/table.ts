import t from 'tap';
import { charWidth, padRight, renderTable } from '../../../../packages/cli/src/format/table';

t.test('columns padded to the widest cell, last column unpadded', async (t) => {
  t.equal(renderTable(['A', 'BB', 'NAME'], []), 'A BB NAME\n');
  t.equal(renderTable(['A', 'BB', 'NAME'], [['long', 'x', 'n1'], ['y', 'wider', 'a much longer name']]),
    'A    BB    NAME\n'
    + 'long x     n1\n'
    + 'y    wider a much longer name\n');
});

t.test('width counts characters, not bytes or UTF-16 units', async (t) => {
  t.equal(charWidth('世界🚀'), 3);
  t.equal(padRight('🚀', 3), '🚀  ');
  t.equal(padRight('toolong', 3), 'toolong');
});
