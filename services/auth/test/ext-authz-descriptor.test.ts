import * as fs from 'node:fs';
import { authorizationDefinition, type CheckResponse } from '../src/ext-authz';
import { envoyCheckRequest, loadEnvoyAuthPackage } from './envoy-authz-client';

// The generator is plain JS so it runs without a build; its exports are typed here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const generator = require('../scripts/gen-envoy-authz.js') as { render(): string; OUT: string };

type Method = { requestSerialize(v: object): Buffer; requestDeserialize(b: Buffer): object; responseSerialize(v: object): Buffer };

describe("the Authorization descriptor generated from Envoy's protos", () => {
  it('is up to date with the protos of the installed @grpc/grpc-js-xds (else run services/auth/scripts/gen-envoy-authz.js)', () => {
    expect(fs.readFileSync(generator.OUT, 'utf8')).toBe(generator.render());
  });

  const envoy = () => (loadEnvoyAuthPackage()['envoy.service.auth.v3.Authorization'] as unknown as { Check: Method }).Check;

  it('encodes a denial byte for byte as the full Envoy protos do', () => {
    const response: CheckResponse = {
      status: { code: 16, message: 'No API key was sent.' },
      denied_response: {
        status: { code: 401 },
        headers: [{ header: { key: 'www-authenticate', value: 'Bearer realm="murmur"' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }],
        body: '{"error":{}}',
      },
    };
    const ours = authorizationDefinition().Check.responseSerialize(response);
    expect(ours.length).toBeGreaterThan(40);
    expect(ours.equals(envoy().responseSerialize(response))).toBe(true);
  });

  it('encodes an allow with dynamic metadata byte for byte as the full Envoy protos do', () => {
    const response: CheckResponse = {
      status: { code: 0, message: '' },
      ok_response: { headers: [{ header: { key: 'x-murmur-principal', value: 'eyJ0eXAiOiJtdXJtdXItcHJpbmNpcGFsK2p3dCJ9.e30.sig' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }] },
      dynamic_metadata: { fields: { user_id: { stringValue: 'usr_1' } } },
    };
    expect(authorizationDefinition().Check.responseSerialize(response).equals(envoy().responseSerialize(response))).toBe(true);
  });

  it('decodes every part of a realistic CheckRequest it reads', () => {
    const bytes = envoy().requestSerialize(envoyCheckRequest({ authorization: 'Bearer x', rawHeaders: false }));
    const decoded = authorizationDefinition().Check.requestDeserialize(bytes);
    expect(decoded.attributes?.request?.http).toMatchObject({
      method: 'POST',
      path: '/murmur.library.v1.LibraryService/ListRecordings',
      headers: expect.objectContaining({ authorization: 'Bearer x', 'content-type': 'application/grpc' }),
    });
    const raw = envoy().requestSerialize(envoyCheckRequest({ authorization: 'Bearer y', rawHeaders: true }));
    const rawHeaders = authorizationDefinition().Check.requestDeserialize(raw).attributes?.request?.http?.header_map?.headers ?? [];
    expect(rawHeaders.find((h) => h.key === 'authorization')?.raw_value?.toString('utf8')).toBe('Bearer y');
  });
});
