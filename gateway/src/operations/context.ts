/**
 * What every operation runs with: the verified principal and the service clients. REST and
 * MCP build one per call after authentication and hand it to the same operation functions.
 */
import type { auth } from '@murmur/proto';
import type { ServiceClients } from '@murmur/kit';
import type { AudioUrlPolicy } from '../upload/fetch-audio';

export interface OperationContext {
  principal: auth.Principal;
  clients: ServiceClients;
  /** Where an `audio_url` may point (MURMUR_AUDIO_URL_*); absent: public http(s) on 80/443 only. */
  audioUrlPolicy?: AudioUrlPolicy;
}
