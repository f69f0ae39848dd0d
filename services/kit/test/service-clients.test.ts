/** The one factory of the services' gRPC clients (kit service-clients.ts): all five, or the ones asked for. */
import { closeServiceClients, createServiceClients, type ServiceAddresses } from '@murmur/kit';

const DOWN: ServiceAddresses = { AUTH_ADDR: '127.0.0.1:1', BILLING_ADDR: '127.0.0.1:1', LIBRARY_ADDR: '127.0.0.1:1', TRANSCRIPTION_ADDR: '127.0.0.1:1', CONVERSION_ADDR: '127.0.0.1:1' };

describe('createServiceClients', () => {
  it('builds one client per service, each with the RPCs of its service', () => {
    const clients = createServiceClients(DOWN, { deadlineMs: 1_000 });
    try {
      expect(Object.keys(clients).sort()).toEqual(['auth', 'billing', 'conversion', 'library', 'transcription']);
      expect(typeof clients.auth.verifyKey).toBe('function');
      expect(typeof clients.library.listRecordings).toBe('function');
      expect(typeof clients.transcription.submitTranscription).toBe('function');
    } finally {
      closeServiceClients(clients);
    }
  });

  it('builds only the services asked for, from their addresses alone', () => {
    const clients = createServiceClients({ BILLING_ADDR: '127.0.0.1:1', LIBRARY_ADDR: '127.0.0.1:1' }, { deadlineMs: 1_000 }, ['billing', 'library']);
    try {
      expect(Object.keys(clients).sort()).toEqual(['billing', 'library']);
    } finally {
      closeServiceClients(clients);
    }
  });

  it('answers a call to a service that is down with service_unavailable', async () => {
    const { auth } = createServiceClients(DOWN, { deadlineMs: 2_000 }, ['auth']);
    try {
      await expect(auth.listUsers({ pageSize: 1, pageToken: '' })).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      auth.close();
    }
  });
});
