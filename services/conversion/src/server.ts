/** gRPC handlers of murmur.conversion.v1.ConversionService: request → service call → response. */
import { bindService, type BoundService } from '@murmur/kit';
import { conversion } from '@murmur/proto';
import type { ConversionService } from './service';

/** Binds every RPC of the contract to `service`. */
export function conversionHandlers(service: ConversionService): BoundService {
  return bindService(conversion.ConversionServiceService, {
    async convert(req, ctx) {
      return service.convert(req, ctx.signal);
    },
    async answer(req, ctx) {
      return service.answer(req, ctx.signal);
    },
    async listKinds() {
      return service.listKinds();
    },
  });
}
