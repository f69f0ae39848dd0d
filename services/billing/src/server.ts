/** Billing's gRPC handlers: request → service call → response, nothing else. */
import { bindService, type BoundService } from '@murmur/kit';
import { billing } from '@murmur/proto';
import type { BillingService } from './charging';

/** The bound BillingService of murmur.billing.v1 over the domain service. */
export function billingHandlers(service: BillingService): BoundService {
  return bindService(billing.BillingServiceService, {
    async listPlans() {
      return { plans: service.listPlans() };
    },
    async getUsage(req) {
      return { usage: await service.getUsage(req.userId) };
    },
    async changePlan(req) {
      return { usage: await service.changePlan(req.userId, req.planId) };
    },
    async grantPrepaidCredits(req) {
      return { usage: await service.grantPrepaidCredits(req.userId, req.credits, req.note) };
    },
    async setSpendingCap(req) {
      return { usage: await service.setSpendingCap(req.userId, req.capCents) };
    },
    async adjustCredits(req) {
      return {
        usage: await service.adjustCredits(req.userId, { monthlyCredits: req.monthlyCredits, prepaidCredits: req.prepaidCredits, note: req.note }),
      };
    },
    async admitAiRequest(req) {
      return service.admitAiRequest(req.userId, req.operation);
    },
    async reserve(req) {
      return { reservation: await service.reserve(req) };
    },
    async commit(req) {
      return { reservation: await service.commit(req.userId, req.reservationId, req.credits, req.usageSeconds) };
    },
    async release(req) {
      return { reservation: await service.release(req.userId, req.reservationId, req.reason) };
    },
    async renewReservation(req) {
      return { reservation: await service.renewReservation(req.userId, req.reservationId, req.holdSeconds) };
    },
    async getRateLimit(req) {
      return { rateLimit: await service.getRateLimit(req.userId) };
    },
    async listLedgerEntries(req) {
      return service.listLedgerEntries(req.userId, req.pageSize, req.pageToken);
    },
  });
}
