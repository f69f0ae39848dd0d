/** The gateway's gRPC clients, one per service it calls; it owns no data of its own. */
import { auth, billing, library } from '@murmur/proto';
import { createClient, type PromiseClient } from '@murmur/kit';

export interface Clients {
  auth: PromiseClient<auth.AuthServiceClient>;
  billing: PromiseClient<billing.BillingServiceClient>;
  library: PromiseClient<library.LibraryServiceClient>;
}

export interface ServiceAddresses {
  AUTH_ADDR: string;
  BILLING_ADDR: string;
  LIBRARY_ADDR: string;
}

export function createClients(addr: ServiceAddresses, deadlineMs: number): Clients {
  return {
    auth: createClient(auth.AuthServiceClient, addr.AUTH_ADDR, { deadlineMs }),
    billing: createClient(billing.BillingServiceClient, addr.BILLING_ADDR, { deadlineMs }),
    // A recording with a 5,000,000-character transcript and its segments is far above gRPC's 4 MB default.
    library: createClient(library.LibraryServiceClient, addr.LIBRARY_ADDR, { deadlineMs, maxReceiveMessageBytes: 64 * 1024 * 1024 }),
  };
}

export function closeClients(clients: Clients): void {
  clients.auth.close();
  clients.billing.close();
  clients.library.close();
}
