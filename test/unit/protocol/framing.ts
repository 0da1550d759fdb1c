import t from 'tap';
import { FrameDecoder, encodeFrame } from '@xlurm/protocol';

t.test('frames split anywhere decode the same; raw attachments travel as bytes', async (t) => {
  const raw = Buffer.from([0, 10, 255, 10, 13]);
  const bytes = Buffer.concat([encodeFrame({ a: 1 }), encodeFrame({ event: 'log' }, raw), encodeFrame({ b: 'x\ny' })]);
  for (let split = 0; split <= bytes.length; split++) {
    const d = new FrameDecoder(1024);
    const frames = [...d.push(bytes.subarray(0, split)), ...d.push(bytes.subarray(split))];
    t.same(frames.map((f) => f.msg), [{ a: 1 }, { event: 'log', raw: 5 }, { b: 'x\ny' }]);
    t.same(frames[1]!.raw, raw);
  }
});

t.test('limits and malformed input', async (t) => {
  t.throws(() => new FrameDecoder(8).push(Buffer.from('{"aaaaaaaaaa":1}\n')), { name: 'FrameTooLarge' });
  t.throws(() => new FrameDecoder(8).push(Buffer.alloc(9, 0x20)), { name: 'FrameTooLarge' }, 'no newline yet but over the limit');
  t.throws(() => new FrameDecoder(64).push(Buffer.from('{"a":\n')), { name: 'FrameSyntax' });
  t.throws(() => new FrameDecoder(64).push(Buffer.from([0x22, 0xff, 0x22, 0x0a])), { name: 'FrameSyntax' }, 'invalid UTF-8 refused');
  t.throws(() => new FrameDecoder(64).push(Buffer.from('{"raw":-1}\n')), { name: 'FrameSyntax' });
});
