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

t.test('request decoding: nesting is limited before parsing, raw attachments are not honoured', async (t) => {
  const opts = { maxDepth: 4, raw: false };
  t.same(new FrameDecoder(1024, opts).push(Buffer.from('{"a":{"b":[["x"]]}}\n')).map((f) => f.msg), [{ a: { b: [['x']] } }], 'depth 4 passes');
  t.throws(() => new FrameDecoder(1024, opts).push(Buffer.from('{"a":{"b":[[[1]]]}}\n')), { name: 'FrameSyntax', message: /nested deeper than 4 levels/ });
  t.same(new FrameDecoder(1024, opts).push(Buffer.from('{"s":"[[[[[[{{{{\\"[[[[["}\n')).map((f) => f.msg), [{ s: '[[[[[[{{{{"[[[[[' }], 'brackets in strings (and escaped quotes) do not count');
  // A megabyte-deep frame is refused fast, without JSON.parse.
  const deep = Buffer.from('['.repeat(1 << 20) + ']'.repeat(1 << 20) + '\n');
  t.throws(() => new FrameDecoder(4 << 20, { maxDepth: 32 }).push(deep), { name: 'FrameSyntax', message: /nested deeper/ });
  const frames = new FrameDecoder(1024, opts).push(Buffer.from('{"op":"status","raw":16000000}\n'));
  t.same(frames.map((f) => f.msg), [{ op: 'status', raw: 16000000 }], 'a raw field is only a field: the frame is complete at its newline');
  t.notOk(frames[0]!.raw);
});

t.test('splitRaw: an attachment is handed out in pieces as it arrives, views of the pushed chunks', async (t) => {
  const raw = Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff));
  const bytes = Buffer.concat([encodeFrame({ a: 1 }), encodeFrame({ event: 'log', offset: 7 }, raw), encodeFrame({ event: 'log' }, Buffer.alloc(0)), encodeFrame({ b: 2 })]);
  for (const step of [1, 7, 64, 299, bytes.length]) {
    const d = new FrameDecoder(1024, { splitRaw: true });
    const frames = [];
    for (let i = 0; i < bytes.length; i += step) frames.push(...d.push(bytes.subarray(i, i + step)));
    t.same(frames[0]!.msg, { a: 1 });
    const pieces = frames.filter((f) => (f.msg as any).offset === 7);
    t.ok(pieces.every((f) => f.raw!.length > 0), `step ${step}: no empty pieces`);
    let at = 0;
    for (const f of pieces) { t.equal(f.rawAt, at); at += f.raw!.length; }
    t.same(Buffer.concat(pieces.map((f) => f.raw!)), raw, `step ${step}: the bytes, in order`);
    if (step === 1) t.equal(pieces.length, 300, 'one piece per pushed byte: nothing waits for the whole attachment');
    const empty = frames.filter((f) => (f.msg as any).event === 'log' && (f.msg as any).offset === undefined);
    t.same(empty.map((f) => [f.raw!.length, f.rawAt]), [[0, 0]], 'an empty attachment is one empty piece');
    t.same(frames[frames.length - 1]!.msg, { b: 2 });
    t.equal(d.bufferedBytes, 0);
  }
});
