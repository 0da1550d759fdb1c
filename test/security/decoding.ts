// Class "decoding before validating" (extensions 28; docs/security.md): every request is decoded
// and checked against its op's schema before any of it is acted on. Malformed frames, unknown
// fields and out-of-range values in every op (walked from the protocol's own schemas, so a new op
// is covered without editing this file), and MCP tool arguments outside a tool's schema, are each
// refused with a clear code; nothing is answered INTERNAL and the daemon keeps serving.
// Huge frames, deep nesting, slow and vanishing clients and the random mutations are
// test/robustness/protocol.ts's (its `judge` is shared through test/helpers/probe.ts).
import t from 'tap';
import Ajv from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { Ops } from '@xlurm/protocol/dist/schemas';
import { startDaemon } from '../helpers/daemon';
import { startMcp } from '../helpers/mcp';
import { exchange, judge } from '../helpers/probe';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = TSchema & {
  type?: string; properties?: Record<string, Schema>; required?: string[]; anyOf?: Schema[]; items?: Schema;
  minimum?: number; maximum?: number; minLength?: number; minItems?: number; const?: Json; enum?: Json[];
};

const ajv = new Ajv({ strict: false });

/** A value the schema accepts, for the shapes the protocol uses; undefined when there is none simple. */
function sample(s: Schema): Json | undefined {
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0]!;
  if (s.anyOf) { for (const o of s.anyOf) { const v = sample(o); if (v !== undefined) return v; } return undefined; }
  switch (s.type) {
    case 'integer': case 'number': return s.minimum !== undefined && s.minimum > 1 ? s.minimum : Math.max(1, s.minimum ?? 1);
    case 'string': return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'boolean': return false;
    case 'null': return null;
    case 'array': { const v = s.items ? sample(s.items) : 1; return v === undefined ? undefined : Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => v); }
    case 'object': {
      const o: Record<string, Json> = {};
      for (const k of s.required ?? []) { const v = sample(s.properties?.[k] ?? {} as Schema); if (v === undefined) return undefined; o[k] = v; }
      return o;
    }
    default: return undefined;
  }
}

/** Out-of-range forms of an integer property: past each bound, a fraction, a string. */
function outOfRange(s: Schema): Json[] {
  const ints = s.type === 'integer' ? [s] : (s.anyOf ?? []).filter((o) => o.type === 'integer');
  const out: Json[] = [];
  for (const i of ints) {
    if (i.maximum !== undefined) out.push(i.maximum + 1 <= Number.MAX_SAFE_INTEGER ? i.maximum + 1 : 2 ** 64);
    if (i.minimum !== undefined) out.push(i.minimum - 1);
    out.push(1.5);
  }
  return out;
}

const frame = (op: string, args: Json) => JSON.stringify({ v: 1, op, args }) + '\n';

t.test('every op: unknown fields and out-of-range values are INVALID_REQUEST, naming the field', async (t) => {
  const d = await startDaemon(t, {});
  let sent = 0;
  for (const [op, def] of Object.entries(Ops)) {
    const schema = def.req as unknown as Schema;
    const validate = ajv.compile(schema);
    const base = sample(schema);
    const valid = base !== undefined && validate(base);
    // An unknown field beside valid arguments: refused by name (never ignored, never acted on).
    const unknown = { ...(valid ? base as Record<string, Json> : {}), zz_not_a_field: 1 };
    let r = await exchange(d.socket, frame(op, unknown));
    sent++;
    t.equal((r.frame as any)?.error?.code, 'INVALID_REQUEST', `${op}: unknown field refused`);
    if (valid) t.match((r.frame as any)?.error?.message, /unknown field `zz_not_a_field`/, `${op}: the message names it`);
    if (!valid) continue;
    for (const [key, prop] of Object.entries(schema.properties ?? {})) {
      for (const value of outOfRange(prop)) {
        const args = { ...base as Record<string, Json>, [key]: value };
        if (validate(args)) continue; // in range for this schema after all
        r = await exchange(d.socket, frame(op, args));
        sent++;
        const f = r.frame as any;
        t.equal(f?.error?.code, 'INVALID_REQUEST', `${op}.${key} = ${value}: ${f?.error?.message}`);
        t.match(f?.error?.message, new RegExp(`args\\.${key}\\b`), `${op}.${key}: the message names the field`);
      }
    }
  }
  t.ok(sent > Object.keys(Ops).length, `${sent} requests over ${Object.keys(Ops).length} ops`);
  t.ok(await d.ping(), 'the daemon still serves');
});

t.test('malformed frames: each a clear code, never INTERNAL; the daemon keeps serving', async (t) => {
  const d = await startDaemon(t, {});
  const cases: Array<[string | Buffer, string, RegExp?]> = [
    ['{\n', 'INVALID_REQUEST'],
    ['{"v":1,"op":"status","args":{}}trailing\n', 'INVALID_REQUEST'],
    ['null\n', 'INVALID_REQUEST', /expected a JSON object/],
    ['[1,2]\n', 'INVALID_REQUEST', /expected a JSON object/],
    ['"status"\n', 'INVALID_REQUEST', /expected a JSON object/],
    ['{"op":"status"}\n', 'INVALID_REQUEST', /missing protocol version/],
    ['{"v":"1","op":"status"}\n', 'INVALID_REQUEST', /missing protocol version/],
    ['{"v":99,"op":"status"}\n', 'VERSION_MISMATCH'],
    ['{"v":1}\n', 'INVALID_REQUEST', /missing `op`/],
    ['{"v":1,"op":"no-such-op"}\n', 'UNKNOWN_OP', /unknown operation: no-such-op/],
    ['{"v":1,"op":"status","args":{},"extra":true}\n', 'INVALID_REQUEST', /unknown field `extra`/],
    ['{"v":1,"op":"status","args":[]}\n', 'INVALID_REQUEST'],
    ['{"v":1,"op":"get","args":{"id":"1"}}\n', 'INVALID_REQUEST', /args\.id/],
    ['{"v":1,"op":"get","args":{"id":1e400}}\n', 'INVALID_REQUEST'],
    [Buffer.concat([Buffer.from('{"v":1,"op":"get","args":{"id":1,"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')]), 'INVALID_REQUEST'],
    [`{"v":1,"op":"status","args":{"pad":"${'x'.repeat(5 * 1024 * 1024)}"}}\n`, 'MESSAGE_TOO_LARGE'],
  ];
  for (const [payload, code, message] of cases) {
    const r = await exchange(d.socket, payload);
    const label = payload.toString().slice(0, 50).trim();
    t.ok(judge(r).ok, `${label}: a coded error (${judge(r).label})`);
    t.equal((r.frame as any)?.error?.code, code, label);
    if (message) t.match((r.frame as any)?.error?.message, message, label);
  }
  t.ok(await d.ping(), 'the daemon still serves');
});

t.test('MCP: every tool refuses an argument outside its schema by name, and nothing happens', async (t) => {
  const d = await startDaemon(t, {});
  const mcp = await startMcp(t, d);
  const { tools } = await mcp.client.listTools();
  t.ok(tools.length >= 7);
  for (const tool of tools) {
    t.equal(tool.inputSchema.additionalProperties, false, `${tool.name}: its listed schema allows no other argument`);
    const args: Record<string, unknown> = { bogus_argument: 1 };
    if ((tool.inputSchema.required ?? []).includes('id')) args.id = 1;
    if (tool.name === 'submit') args.command = 'true';
    const r = await mcp.call(tool.name, args);
    t.equal(r.isError, true, `${tool.name}: a tool error`);
    t.match(r.text, /bogus_argument/, `${tool.name}: naming the argument: ${r.text.slice(0, 200)}`);
  }
  // A misspelt key is not a job without its limit.
  const typo = await mcp.call('submit', { command: 'true', time_limt: '5m' });
  t.equal(typo.isError, true);
  t.match(typo.text, /time_limt/);
  t.same((await d.jobs()).length, 0, 'no job was submitted');
  t.equal((await mcp.call('devices')).isError, false, 'the server still serves');
});
