/**
 * Billing's gRPC handlers: request → service call → response, nothing else. RPCs of the
 * charging path (AdmitAiRequest, Reserve, Commit, Release) are not bound yet and answer
 * UNIMPLEMENTED until the release that implements them.
 */
import { bindService, type BoundService } from '@murmur/kit';
import { billing } from '@murmur/proto';
import type { BillingService } from './service';

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
    async getRateLimit(req) {
      return { rateLimit: await service.getRateLimit(req.userId) };
    },
    async listLedgerEntries(req) {
      return service.listLedgerEntries(req.userId, req.pageSize, req.pageToken);
    },
  });
}
