/**
 * Billing's gRPC handlers: request → domain call → response, nothing else. The proto shapes
 * (enums, messages) are mapped here and only here; the domain works on its own records.
 * Errors are MurmurErrors from the domain; the kit's server factory turns them into statuses.
 */
import { bindService, type BoundService } from '@murmur/kit';
import { billing } from '@murmur/proto';
import type { Accounts, Usage } from './accounts';
import type { Charging } from './charging';
import type { Ledger } from './ledger';
import type { ChargeRecord, LedgerEntryRecord, OperationName, ReservationRecord, ReservationStateName } from './store';
import type { UsageHistory } from './usage-history';
import { audioSecondsCovered } from './limits';

/** The billing domain, one part per concern, as the handlers call it. */
export interface BillingDomain {
  accounts: Accounts;
  charging: Charging;
  ledger: Ledger;
  usageHistory: UsageHistory;
}

const OPERATION_NAMES = new Map<billing.Operation, OperationName>([
  [billing.Operation.OPERATION_TRANSCRIBE, 'transcribe'],
  [billing.Operation.OPERATION_CONVERT, 'convert'],
]);

const OPERATION_ENUMS: Record<OperationName, billing.Operation> = {
  transcribe: billing.Operation.OPERATION_TRANSCRIBE,
  convert: billing.Operation.OPERATION_CONVERT,
};

const STATE_ENUMS: Record<ReservationStateName, billing.ReservationState> = {
  held: billing.ReservationState.RESERVATION_STATE_HELD,
  committed: billing.ReservationState.RESERVATION_STATE_COMMITTED,
  released: billing.ReservationState.RESERVATION_STATE_RELEASED,
  expired: billing.ReservationState.RESERVATION_STATE_EXPIRED,
};

/** undefined for OPERATION_UNSPECIFIED and unknown values: the domain refuses them, after checking the user id. */
function toOperationName(operation: billing.Operation): OperationName | undefined {
  return OPERATION_NAMES.get(operation);
}

function toReservation(r: ReservationRecord): billing.Reservation {
  return {
    id: r.id,
    userId: r.userId,
    operation: OPERATION_ENUMS[r.operation],
    credits: r.credits,
    monthlyCredits: r.monthlyCredits,
    prepaidCredits: r.prepaidCredits,
    state: STATE_ENUMS[r.state],
    idempotencyKey: r.idempotencyKey,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    audioSecondsCovered: r.operation === 'transcribe' && r.unitCredits > 0 ? audioSecondsCovered(r.state === 'held' ? r.heldCredits : r.credits, r.unitCredits) : 0,
  };
}

function toLedgerEntry(row: LedgerEntryRecord): billing.LedgerEntry {
  return {
    id: row.id,
    userId: row.userId,
    kind: row.kind,
    monthlyDelta: row.monthlyDelta,
    prepaidDelta: row.prepaidDelta,
    spendDeltaCents: row.spendDeltaCents,
    reservationId: row.reservationId ?? '',
    note: row.note,
    createdAt: row.createdAt,
  };
}

function toCharge(c: ChargeRecord): billing.Charge {
  return {
    reservationId: c.reservationId,
    operation: OPERATION_ENUMS[c.operation],
    credits: c.credits,
    spendCents: c.spendCents,
    chargedAt: c.chargedAt,
  };
}

/** A copy of the plan: the config's plans are frozen and shared. */
function toPlan(plan: Readonly<billing.Plan>): billing.Plan {
  return { ...plan };
}

function toUsage({ account, plan, rateLimit }: Usage): billing.Usage {
  return {
    userId: account.userId,
    plan: toPlan(plan),
    monthlyCreditsRemaining: account.monthlyRemaining,
    prepaidCreditsRemaining: account.prepaidRemaining,
    periodStart: account.periodStart,
    periodEnd: account.periodEnd,
    spendingCapCents: account.spendingCapCents,
    spendCents: account.spendCents,
    rateLimit,
    creditsUsed: account.creditsUsed,
    transcriptions: account.transcriptions,
    transcriptionSeconds: account.transcriptionSeconds,
    conversions: account.conversions,
    creditsReserved: account.reserved,
  };
}

/** The bound BillingService of murmur.billing.v1 over the domain. */
export function billingHandlers({ accounts, charging, ledger, usageHistory }: BillingDomain): BoundService {
  return bindService(billing.BillingServiceService, {
    async listPlans() {
      return { plans: accounts.listPlans().map(toPlan) };
    },
    async getUsage(req) {
      return { usage: toUsage(await accounts.getUsage(req.userId)) };
    },
    async changePlan(req) {
      return { usage: toUsage(await accounts.changePlan(req.userId, req.planId)) };
    },
    async grantPrepaidCredits(req) {
      return { usage: toUsage(await accounts.grantPrepaidCredits(req.userId, req.credits, req.note)) };
    },
    async setSpendingCap(req) {
      return { usage: toUsage(await accounts.setSpendingCap(req.userId, req.capCents)) };
    },
    async adjustCredits(req) {
      const adjust = { monthlyCredits: req.monthlyCredits, prepaidCredits: req.prepaidCredits, note: req.note };
      return { usage: toUsage(await accounts.adjustCredits(req.userId, adjust)) };
    },
    async getRateLimit(req) {
      return { rateLimit: await accounts.getRateLimit(req.userId) };
    },
    async admitAiRequest(req) {
      const admission = await charging.admitAiRequest(req.userId, toOperationName(req.operation));
      return { rateLimit: admission.rateLimit, admissionId: admission.admissionId };
    },
    async reserve(req) {
      const { reservation, rateLimit, replayed } = await charging.reserve({
        userId: req.userId,
        operation: toOperationName(req.operation),
        credits: req.credits,
        idempotencyKey: req.idempotencyKey,
        admissionId: req.admissionId,
        audioSeconds: req.audioSeconds,
        transcriptChars: req.transcriptChars,
        holdSeconds: req.holdSeconds,
        requestFingerprint: req.requestFingerprint,
      });
      return { reservation: toReservation(reservation), rateLimit, replayed };
    },
    async extendReservation(req) {
      const extend = { userId: req.userId, reservationId: req.reservationId, audioSeconds: req.audioSeconds, maxAudioSeconds: req.maxAudioSeconds };
      return { reservation: toReservation(await charging.extendReservation(extend)) };
    },
    async commit(req) {
      return { reservation: toReservation(await charging.commit(req.userId, req.reservationId, req.credits, req.usageSeconds, req.audioSeconds)) };
    },
    async release(req) {
      return { reservation: toReservation(await charging.release(req.userId, req.reservationId, req.reason)) };
    },
    async renewReservation(req) {
      return { reservation: toReservation(await charging.renewReservation(req.userId, req.reservationId, req.holdSeconds)) };
    },
    async listLedgerEntries(req) {
      const page = await ledger.listLedgerEntries(req.userId, req.pageSize, req.pageToken);
      return { entries: page.entries.map(toLedgerEntry), nextPageToken: page.nextPageToken };
    },
    async getUsageHistory(req) {
      const history = await usageHistory.getUsageHistory(req.userId, req.recentLimit);
      return {
        periodStart: history.periodStart,
        periodEnd: history.periodEnd,
        days: history.days.map((d) => ({ date: d.date, credits: d.credits, transcriptions: d.transcriptions, conversions: d.conversions })),
        recent: history.recent.map(toCharge),
      };
    },
  });
}
