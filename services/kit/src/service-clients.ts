/**
 * The typed gRPC clients of Murmur's five services, built in this one place for every process
 * that calls them: the gateway (all five), the app's side (the admin CLI, seeding, the Settings
 * pages), the launcher's first start, the bench, and each service for the ones it calls
 * (every service asks auth to verify keys; transcription and conversion charge through billing
 * and store through library).
 */
import { auth, billing, conversion, library, transcription } from '@murmur/proto';
import type { TokenMinter } from './access/tokens';
import { createClient, type PromiseClient } from './grpc-client';

export interface ServiceClients {
  auth: PromiseClient<auth.AuthServiceClient>;
  billing: PromiseClient<billing.BillingServiceClient>;
  library: PromiseClient<library.LibraryServiceClient>;
  transcription: PromiseClient<transcription.TranscriptionServiceClient>;
  conversion: PromiseClient<conversion.ConversionServiceClient>;
}

export type ServiceName = keyof ServiceClients;

/** Where each service listens (the `*_ADDR` settings). */
export interface ServiceAddresses {
  AUTH_ADDR: string;
  BILLING_ADDR: string;
  LIBRARY_ADDR: string;
  TRANSCRIPTION_ADDR: string;
  CONVERSION_ADDR: string;
}

/** The address setting of a service: `library` → `LIBRARY_ADDR`. */
export type AddressOf<K extends ServiceName> = `${Uppercase<K>}_ADDR`;

export interface ServiceClientOptions {
  /** Default deadline of each call, in ms. */
  deadlineMs: number;
  /**
   * The workload the clients call as: the gateway's (whose calls for a verified user carry a
   * principal assertion), a service's own, or the app's admin (CLI, seeding, Settings pages).
   */
  identity?: TokenMinter;
}

/** A recording with a 5,000,000-character transcript and its segments is far above gRPC's 4 MB default. */
const LARGE_MESSAGES = 64 * 1024 * 1024;

const ALL: readonly ServiceName[] = ['auth', 'billing', 'library', 'transcription', 'conversion'];

function clientOf(name: ServiceName, address: string, opts: ServiceClientOptions): ServiceClients[ServiceName] {
  const base = { deadlineMs: opts.deadlineMs, ...(opts.identity ? { identity: opts.identity } : {}) };
  switch (name) {
    case 'auth':
      return createClient(auth.AuthServiceClient, address, base);
    case 'billing':
      return createClient(billing.BillingServiceClient, address, base);
    case 'library':
      return createClient(library.LibraryServiceClient, address, { ...base, maxReceiveMessageBytes: LARGE_MESSAGES });
    case 'transcription':
      return createClient(transcription.TranscriptionServiceClient, address, { ...base, maxReceiveMessageBytes: LARGE_MESSAGES });
    case 'conversion':
      return createClient(conversion.ConversionServiceClient, address, { ...base, maxReceiveMessageBytes: LARGE_MESSAGES });
  }
}

/**
 * One client per service, all calling as `opts.identity`'s workload; with `only`, just those
 * services' clients (and only their addresses are needed).
 */
export function createServiceClients(addresses: ServiceAddresses, opts: ServiceClientOptions): ServiceClients;
export function createServiceClients<K extends ServiceName>(addresses: Pick<ServiceAddresses, AddressOf<K>>, opts: ServiceClientOptions, only: readonly K[]): Pick<ServiceClients, K>;
export function createServiceClients(addresses: Partial<ServiceAddresses>, opts: ServiceClientOptions, only: readonly ServiceName[] = ALL): Partial<ServiceClients> {
  const clients: Partial<Record<ServiceName, unknown>> = {};
  for (const name of only) {
    const address = addresses[`${name.toUpperCase()}_ADDR` as keyof ServiceAddresses];
    if (address === undefined) throw new Error(`no address for ${name} (${name.toUpperCase()}_ADDR)`);
    clients[name] = clientOf(name, address, opts);
  }
  return clients as Partial<ServiceClients>;
}

/** Closes every client of `clients`. */
export function closeServiceClients(clients: Partial<ServiceClients>): void {
  for (const client of Object.values(clients)) client?.close();
}
