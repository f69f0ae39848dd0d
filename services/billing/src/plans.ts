/**
 * The one plan config. Every price, allowance and limit of a plan lives here and nowhere
 * else: the service, the gateway (through ListPlans / GetUsage) and the docs read it from this
 * table, so changing a plan is one edit.
 */
import type { billing } from '@murmur/proto';

/** Audio sizes are decimal, as users read them: 500 MB = 500,000,000 bytes. */
const MB = 1_000_000;

/** Plan id every new account starts on. */
export const DEFAULT_PLAN_ID = 'free';

/**
 * Every plan, cheapest first. Costs are the in-app ones (DESIGN §5): transcription per started
 * minute of audio, conversion per started 1,000 transcript characters; one prepaid credit costs
 * one cent and drawing it counts as spending against the monthly cap.
 */
export const PLANS: readonly Readonly<billing.Plan>[] = Object.freeze([
  {
    id: 'free',
    name: 'Free',
    monthlyCredits: 100,
    rateLimitPerMinute: 10,
    maxAudioBytes: 500 * MB,
    // A free account draws no prepaid credits until its owner raises the cap on purpose.
    defaultSpendingCapCents: 0,
    prepaidCreditPriceCents: 1,
    transcriptionCreditsPerMinute: 1,
    conversionCreditsPer1kChars: 1,
    maxTranscriptChars: 200_000,
  },
  {
    id: 'pro',
    name: 'Pro',
    monthlyCredits: 2_000,
    rateLimitPerMinute: 10,
    maxAudioBytes: 500 * MB,
    defaultSpendingCapCents: 5_000,
    prepaidCreditPriceCents: 1,
    transcriptionCreditsPerMinute: 1,
    conversionCreditsPer1kChars: 1,
    maxTranscriptChars: 1_000_000,
  },
  {
    id: 'business',
    name: 'Business',
    monthlyCredits: 10_000,
    rateLimitPerMinute: 10,
    maxAudioBytes: 500 * MB,
    defaultSpendingCapCents: 50_000,
    prepaidCreditPriceCents: 1,
    transcriptionCreditsPerMinute: 1,
    conversionCreditsPer1kChars: 1,
    maxTranscriptChars: 2_000_000,
  },
].map((plan) => Object.freeze(plan)));

/** The plan with this id, or undefined for an id the config does not know. */
export function planById(id: string): Readonly<billing.Plan> | undefined {
  return PLANS.find((plan) => plan.id === id);
}
