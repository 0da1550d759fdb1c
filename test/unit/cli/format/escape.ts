import t from 'tap';
import { escapeDebug } from '../../../../packages/cli/src/format/escape';

t.test("Rust str::escape_debug", async (t) => {
  const cases: Array<[string, string]> = [
    ['plain name', 'plain name'],
    ['tab\tname', 'tab\\tname'],
    ['a\nb\rc', 'a\\nb\\rc'],
    ['back\\slash', 'back\\\\slash'],
    [`it's "q"`, `it\\'s \\"q\\"`],
    ['nul\0', 'nul\\0'],
    ['bell\x07 del\x7f esc\x1b', 'bell\\u{7} del\\u{7f} esc\\u{1b}'],
    ['nbsp\u00a0x', 'nbsp\\u{a0}x'],
    ['zwsp\u200bx', 'zwsp\\u{200b}x'],
    ['line\u2028sep', 'line\\u{2028}sep'],
    ['héllo 世界 🚀', 'héllo 世界 🚀'],
    ['\u0301accent first', '\\u{301}accent first'],
    ['e\u0301 combining later', 'e\u0301 combining later'],
    ['private\ue000', 'private\\u{e000}'],
    ['', ''],
  ];
  cases.forEach(([input, out], i) => t.equal(escapeDebug(input), out, `case ${i}: ${Buffer.from(input).toString('hex')}`));
});
