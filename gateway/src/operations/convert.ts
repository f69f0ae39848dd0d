/** POST /convert and the MCP `convert` tool: a transcript (inline or a recording's) into an artifact. */
import { noteCredits } from '../http/call-note';
import { type billing, conversion } from '@murmur/proto';
import { MurmurError } from '@murmur/contract';
import type { OperationContext } from './context';
import { presentConversion } from './present';
import type { ConvertInput } from './schemas';

export interface ChargeContext {
  /** From AdmitAiRequest; '' → billing admits the call at its reservation (takes the rate-limit slot there). */
  admissionId: string;
  idempotencyKey: string;
  signal?: AbortSignal;
  /** Told the caller's rate-limit window when billing admitted the call at its reservation. */
  onRateLimit?: (state: billing.RateLimitState) => void;
}

/** Checks what the schema cannot: exactly one source. */
export function checkConvertSource(input: ConvertInput): void {
  const sources = [input.transcript !== undefined, input.recording_id !== undefined].filter(Boolean).length;
  if (sources !== 1) {
    throw new MurmurError('invalid_request', 'Give exactly one of `transcript` or `recording_id`.', {
      param: sources === 0 ? 'transcript' : 'recording_id',
    });
  }
}

export async function convert(ctx: OperationContext, input: ConvertInput, charge: ChargeContext) {
  checkConvertSource(input);
  const res = await ctx.clients.conversion.convert(
    {
      userId: ctx.principal.userId,
      source:
        input.recording_id !== undefined
          ? { $case: 'recordingId', value: input.recording_id }
          : { $case: 'transcript', value: input.transcript ?? '' },
      kind: input.kind,
      outputFormat: input.outputFormat === 'plain' ? conversion.OutputFormat.OUTPUT_FORMAT_PLAIN : conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN,
      instructions: input.instructions ?? '',
      idempotencyKey: charge.idempotencyKey,
      referenceTime: undefined,
      admissionId: charge.admissionId,
    },
    { signal: charge.signal, deadlineMs: 5 * 60_000 },
  );
  if (res.rateLimit) charge.onRateLimit?.(res.rateLimit);
  noteCredits(res.creditsCharged);
  return presentConversion(res);
}
