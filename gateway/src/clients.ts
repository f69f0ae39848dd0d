/** The gateway's gRPC clients, one per service it calls; it owns no data of its own. */
import { auth, billing, conversion, library, transcription } from '@murmur/proto';
import { createClient, type PromiseClient, type TokenMinter } from '@murmur/kit';

export interface Clients {
  auth: PromiseClient<auth.AuthServiceClient>;
  billing: PromiseClient<billing.BillingServiceClient>;
  library: PromiseClient<library.LibraryServiceClient>;
  transcription: PromiseClient<transcription.TranscriptionServiceClient>;
  conversion: PromiseClient<conversion.ConversionServiceClient>;
}

export interface ServiceAddresses {
  AUTH_ADDR: string;
  BILLING_ADDR: string;
  LIBRARY_ADDR: string;
  TRANSCRIPTION_ADDR: string;
  CONVERSION_ADDR: string;
}

/** A recording with a 5,000,000-character transcript and its segments is far above gRPC's 4 MB default. */
const LARGE_MESSAGES = 64 * 1024 * 1024;

/**
 * One client per service, all calling as `identity`'s workload: the gateway's (whose calls for a
 * verified user carry a principal assertion), or the app's admin (CLI, seeding).
 */
export function createClients(addr: ServiceAddresses, deadlineMs: number, identity: TokenMinter): Clients {
  return {
    auth: createClient(auth.AuthServiceClient, addr.AUTH_ADDR, { deadlineMs, identity }),
    billing: createClient(billing.BillingServiceClient, addr.BILLING_ADDR, { deadlineMs, identity }),
    library: createClient(library.LibraryServiceClient, addr.LIBRARY_ADDR, { deadlineMs, identity, maxReceiveMessageBytes: LARGE_MESSAGES }),
    transcription: createClient(transcription.TranscriptionServiceClient, addr.TRANSCRIPTION_ADDR, { deadlineMs, identity, maxReceiveMessageBytes: LARGE_MESSAGES }),
    conversion: createClient(conversion.ConversionServiceClient, addr.CONVERSION_ADDR, { deadlineMs, identity, maxReceiveMessageBytes: LARGE_MESSAGES }),
  };
}

export function closeClients(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
