/** POST /convert's and POST /ask's REST specs: how it reads its body (read before admission when small) and renders its answer. */
import type { Request, Response } from 'express';
import { CONVERT_READ_FIRST_MAX_BYTES } from '@murmur/contract';
import { billing } from '@murmur/proto';
import * as ops from '../operations';
import type { AiRouteSpec } from './ai-route';
import { readJsonBody } from '../http/json-body';
import type { BodyOptions } from '../upload/body-options';
import { canonical, sha256 } from './fingerprint';

function json(status: number, body: unknown) {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
}

/** POST /convert: a JSON body of at most 16 MB (the plan's transcript limit is checked by billing). */
export function convertSpec(body: BodyOptions = {}): AiRouteSpec<ops.ConvertInput> {
  const read = async (req: Request, res: Response) => {
    const input = ops.parseInput(ops.convertInputSchema, await readJsonBody(req, res, { limit: ops.MAX_CONVERT_BODY_BYTES, idleTimeoutMs: body.bodyIdleTimeoutMs }));
    ops.checkConvertSource(input);
    return input;
  };
  return {
    operation: billing.Operation.OPERATION_CONVERT,
    read,
    fingerprint: (input) => sha256(canonical(input)),
    fingerprintOf: async (req, res) => sha256(canonical(await read(req, res))),
    execute: async (ctx, input, call) => json(200, await ops.convert(ctx, input, call)),
    readsBeforeAdmission: (req) => {
      const declared = Number(req.headers['content-length']);
      return Number.isSafeInteger(declared) && declared <= CONVERT_READ_FIRST_MAX_BYTES;
    },
  };
}

/** POST /ask: a small JSON body (a question and filters), always read before admission: its charge admits it. */
export function askSpec(body: BodyOptions = {}): AiRouteSpec<ops.AskInput> {
  const read = async (req: Request, res: Response) =>
    ops.parseInput(ops.askInputSchema, await readJsonBody(req, res, { limit: ops.MAX_ASK_BODY_BYTES, idleTimeoutMs: body.bodyIdleTimeoutMs }));
  return {
    operation: billing.Operation.OPERATION_CONVERT,
    read,
    fingerprint: (input) => sha256(canonical(input)),
    fingerprintOf: async (req, res) => sha256(canonical(await read(req, res))),
    execute: async (ctx, input, call) => json(200, await ops.ask(ctx, input, call)),
    readsBeforeAdmission: () => true,
  };
}
