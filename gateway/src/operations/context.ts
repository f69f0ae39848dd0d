/**
 * What every operation runs with: the verified principal and the service clients. REST and
 * MCP build one per call after authentication and hand it to the same operation functions.
 */
import type { auth } from '@murmur/proto';
import type { Clients } from '../clients';

export interface OperationContext {
  principal: auth.Principal;
  clients: Clients;
}
