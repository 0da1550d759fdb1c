/**
 * Validation at the edge: the envelope by hand, then the one compiled ajv
 * validator of the op. Validators are compiled once at start-up.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import type { OpName, Request } from '@xlurm/protocol';
import { PROTOCOL_VERSION, VERSION, XlurmError } from '@xlurm/protocol';
import { Ops } from '@xlurm/protocol/dist/schemas';

const ajv = new Ajv({ strict: true, allErrors: false, removeAdditional: false, coerceTypes: false, useDefaults: false });
const validators = new Map<string, ValidateFunction>(
  (Object.keys(Ops) as OpName[]).map((op) => [op, ajv.compile(Ops[op].req)]),
);

export function isOp(op: string): op is OpName { return validators.has(op); }

function describe(v: ValidateFunction): string {
  const e = v.errors?.[0];
  if (!e) return 'invalid request';
  const where = e.instancePath ? `args${e.instancePath.replace(/\//g, '.')}` : 'args';
  if (e.keyword === 'additionalProperties') {
    return `invalid request: unknown field \`${(e.params as { additionalProperty: string }).additionalProperty}\` in ${where}`;
  }
  return `invalid request: ${where} ${e.message ?? 'is invalid'}`;
}

/** Check a decoded frame; returns the op and its validated args. */
export function validateRequest(msg: unknown): { op: OpName; args: unknown } {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
    throw new XlurmError('INVALID_REQUEST', 'invalid request: expected a JSON object');
  }
  const m = msg as Partial<Request> & Record<string, unknown>;
  if (typeof m.v !== 'number') throw new XlurmError('INVALID_REQUEST', 'invalid request: missing protocol version `v`');
  if (m.v !== PROTOCOL_VERSION) {
    throw new XlurmError('VERSION_MISMATCH',
      `protocol version mismatch: this client speaks protocol ${m.v}, the daemon (xlurm ${VERSION}) speaks protocol ${PROTOCOL_VERSION}; ` +
      'use the xlurm commands installed with the running daemon, or ask the administrator to restart it after the upgrade (`xlurm restart`)');
  }
  for (const k of Object.keys(m)) {
    if (k !== 'v' && k !== 'op' && k !== 'args') throw new XlurmError('INVALID_REQUEST', `invalid request: unknown field \`${k}\``);
  }
  if (typeof m.op !== 'string') throw new XlurmError('INVALID_REQUEST', 'invalid request: missing `op`');
  if (!isOp(m.op)) throw new XlurmError('UNKNOWN_OP', `unknown operation: ${m.op.slice(0, 64)}`);
  const args = m.args === undefined ? {} : m.args;
  const v = validators.get(m.op)!;
  if (!v(args)) throw new XlurmError('INVALID_REQUEST', describe(v));
  return { op: m.op, args };
}
