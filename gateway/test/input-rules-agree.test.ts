/**
 * The gateway and the transcription service check the same inputs: the gateway before any
 * paid work, the service again for its direct gRPC callers. They once disagreed (the service
 * took "en_US" and tags of any length, and 500 MiB where the gateway and DESIGN.md say
 * 500,000,000 bytes); here both verdicts are taken at the boundary and must match.
 *
 * And what is published agrees with what is enforced: the OpenAPI document's and the MCP
 * schemas' numbers and patterns are the contract's (they once drifted: a cursor of 1000
 * characters published where 512 was enforced, language subtags of 2–8 where 1–8 were taken).
 */
import {
  DEFAULT_PAGE_LIMIT,
  IDEMPOTENCY_KEY_PATTERN,
  isIdempotencyKey,
  isLanguageTag,
  JOB_STATUS_NAMES,
  isLanguageOption,
  KEYTERM_PATTERN_SOURCE,
  LANGUAGE_OPTION,
  MAX_KEYTERM_CHARS,
  MAX_KEYTERMS,
  MAX_SPEAKERS_EXPECTED,
  REDACTION_POLICIES,
  REDACTION_STYLES,
  MAX_AUDIO_BYTES,
  MAX_CURSOR_CHARS,
  MAX_LANGUAGE_CHARS,
  MAX_PAGE_LIMIT,
  MAX_QUERY_VALUE_CHARS,
  MurmurError,
  REQUEST_ID_PATTERN,
} from '@murmur/contract';
import { createClient, createLogger } from '@murmur/kit';
import { billing } from '@murmur/proto';
import { z } from 'zod';
import { audioLimitOf, spoolUpload, TranscriptionService } from '@murmur/transcription';
import * as ops from '../src/operations';
import { TOOLS } from '../src/mcp/tools';
import { buildOpenApiDocument } from '../src/openapi/document';
import { UploadStream } from '../src/upload/upload-stream';

type Verdict = 'accepted' | string;

async function verdict(run: () => unknown): Promise<Verdict> {
  try {
    await run();
    return 'accepted';
  } catch (err) {
    if (err instanceof MurmurError) return `${err.code} (${err.param})`;
    throw err;
  }
}

describe('the gateway and the transcription service agree on', () => {
  // Never called: validate() and the spool run before billing is asked anything.
  const billingClient = createClient(billing.BillingServiceClient, '127.0.0.1:1');
  const service = new TranscriptionService({
    billing: billingClient,
    // An engine for any language (as whisper's multilingual models and the OpenAI engine are),
    // so the verdict is the service's own tag rule, not an engine's language list.
    engine: { name: 'any-language', model: 'none', recognize: () => Promise.reject(new Error('not used')) },
    log: createLogger('input-rules-agree', 'silent'),
  });
  afterAll(() => billingClient.close());

  const config = { userId: 'usr_test', language: '', idempotencyKey: '', maxBytes: 0, filename: '', contentType: '', admissionId: '' };

  /** A well-formed tag of `n` characters (n from 31 to 38): "en-aaaaaaaa-bbbbbbbb-cccccccc-dd…". */
  function tagOfLength(n: number): string {
    const tag = `en-${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-${'d'.repeat(n - 30)}`;
    if (tag.length !== n) throw new Error(`tagOfLength(${n}) is ${tag.length} long`);
    return tag;
  }

  const tags: Array<[string, boolean]> = [
    ['', true],
    ['en', true],
    ['EN', true],
    ['pt-BR', true],
    ['zh-Hant-TW', true],
    ['en-x', true],
    ['yue-HK', true],
    [tagOfLength(35), true], // the longest
    [tagOfLength(36), false],
    [`en${'-abcdefgh'.repeat(10)}`, false],
    ['en_US', false],
    ['e', false],
    ['engl', false],
    ['en-', false],
    ['en--US', false],
    ['en-abcdefghi', false],
    ['en US', false],
    [' en', false],
    ['12', false],
  ];

  it.each(tags)('language %j (accepted: %s)', async (tag, accepted) => {
    const gateway = await verdict(() => ops.languageOf(tag));
    const direct = await verdict(() => service.validate({ ...config, language: tag }));
    expect({ gateway: gateway === 'accepted', direct: direct === 'accepted' }).toEqual({ gateway: accepted, direct: accepted });
    if (!accepted) expect([gateway, direct]).toEqual(['invalid_request (language)', 'invalid_request (language)']);
  });

  it('one audio limit: what the gateway sends as max_bytes is what the service applies when none is sent', () => {
    expect(ops.MAX_AUDIO_BYTES).toBe(500_000_000);
    expect(audioLimitOf({ maxBytes: 0 })).toBe(ops.MAX_AUDIO_BYTES);
    expect(audioLimitOf({ maxBytes: ops.MAX_AUDIO_BYTES })).toBe(MAX_AUDIO_BYTES);
  });

  // One 50 MB buffer reused (a Readable keeps references, not copies), so memory stays small.
  const block = Buffer.alloc(50_000_000);
  function chunksOf(total: number): Buffer[] {
    const out: Buffer[] = [];
    for (let left = total; left > 0; left -= block.length) out.push(left >= block.length ? block : block.subarray(0, left));
    return out;
  }

  it.each([
    ['one byte under 500 MB', MAX_AUDIO_BYTES - 1, 'accepted'],
    ['exactly 500 MB', MAX_AUDIO_BYTES, 'accepted'],
    ['one byte over 500 MB', MAX_AUDIO_BYTES + 1, 'audio_too_large'],
  ])('audio %s', async (_name, size, expected) => {
    const gateway = await verdict(() => {
      const upload = new UploadStream({ maxBytes: ops.MAX_AUDIO_BYTES, param: 'audio' });
      upload.attach({ describe: () => ({ fields: {}, languageKnown: true, filename: 'a', contentType: 'audio/wav' }), pull: () => {}, stop: () => {} });
      for (const chunk of chunksOf(size)) upload.push(chunk);
      upload.audio.destroy();
    });
    async function* stream() {
      yield* chunksOf(size);
    }
    const direct = await verdict(() => spoolUpload(stream(), '/dev/null', audioLimitOf({ maxBytes: 0 })));
    expect(gateway.split(' ')[0]).toBe(expected);
    expect(direct.split(' ')[0]).toBe(expected);
  });
});

describe('the OpenAPI document and the MCP schemas publish the contract', () => {
  const doc = buildOpenApiDocument('test');
  const params = doc.components.parameters as Record<string, { schema: Record<string, unknown> }>;
  const schemas = doc.components.schemas as Record<string, { properties?: Record<string, Record<string, unknown>> }>;
  /** A tool's input schema as tools/list shows it. */
  const toolInput = (name: string) => {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return z.toJSONSchema(tool.config.inputSchema, { io: 'input' }) as { properties: Record<string, Record<string, unknown>> };
  };
  const PAGED_TOOLS = ['list_recordings', 'list_thought_threads', 'list_folders'];

  it('page size: 1 to MAX_PAGE_LIMIT, default DEFAULT_PAGE_LIMIT', () => {
    expect(params.limit!.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT });
    for (const tool of PAGED_TOOLS) expect([tool, toolInput(tool).properties.limit]).toEqual([tool, expect.objectContaining({ minimum: 1, maximum: MAX_PAGE_LIMIT })]);
  });

  it('cursor: at most MAX_CURSOR_CHARS, everywhere', () => {
    expect(params.cursor!.schema.maxLength).toBe(MAX_CURSOR_CHARS);
    for (const tool of PAGED_TOOLS) expect([tool, toolInput(tool).properties.cursor!.maxLength]).toEqual([tool, MAX_CURSOR_CHARS]);
  });

  it('other query values: at most MAX_QUERY_VALUE_CHARS', () => {
    for (const name of ['q', 'folder_id', 'created_after', 'created_before']) expect([name, params[name]!.schema.maxLength]).toEqual([name, MAX_QUERY_VALUE_CHARS]);
  });

  it('Idempotency-Key: the contract pattern, which decides as isIdempotencyKey does', () => {
    const published = params['Idempotency-Key']!.schema.pattern as string;
    expect(published).toBe(IDEMPOTENCY_KEY_PATTERN.source);
    for (const key of ['k', 'k'.repeat(255), 'k'.repeat(256), '', 'two words', 'a\tb', 'clé', '7c0e7f6e-3b1a-4d52-9a4e-2f1f5f6b8c21']) {
      expect([key, new RegExp(published, 'u').test(key)]).toEqual([key, isIdempotencyKey(key)]);
    }
  });

  it('language: the contract pattern and length, in the REST body and the MCP tool', () => {
    for (const body of ['TranscribeMultipartRequest', 'TranscribeJsonRequest']) {
      const language = schemas[body]!.properties!.language!;
      expect([body, language.pattern, language.maxLength]).toEqual([body, LANGUAGE_OPTION.source, MAX_LANGUAGE_CHARS]);
      for (const tag of ['en', 'pt-BR', 'en-x', 'zh-Hant-TW', 'en_US', 'e', 'en-abcdefghi', 'auto', 'automatic', 'Auto']) {
        expect([tag, new RegExp(language.pattern as string, 'u').test(tag)]).toEqual([tag, isLanguageOption(tag)]);
      }
      // The tag rule inside it is the library's (what a stored transcript's language may be).
      expect(isLanguageOption('pt-BR')).toBe(isLanguageTag('pt-BR'));
    }
    expect(toolInput('transcribe').properties.language!.maxLength).toBe(MAX_LANGUAGE_CHARS);
  });

  it('timeline options: the contract\'s limits, in the REST body and the MCP tool', () => {
    for (const body of ['TranscribeMultipartRequest', 'TranscribeJsonRequest']) {
      const p = schemas[body]!.properties! as Record<string, any>;
      expect([p.keyterms.maxItems, p.keyterms.items.maxLength, p.keyterms.items.pattern]).toEqual([MAX_KEYTERMS, MAX_KEYTERM_CHARS, KEYTERM_PATTERN_SOURCE]);
      expect(p.speakers_expected.maximum).toBe(MAX_SPEAKERS_EXPECTED);
      expect(p.redact_pii_policies.items.enum).toEqual([...REDACTION_POLICIES]);
      expect(p.redact_pii_sub.enum).toEqual([...REDACTION_STYLES]);
    }
    const tool = toolInput('transcribe').properties as Record<string, any>;
    expect([tool.keyterms.maxItems, tool.keyterms.items.maxLength]).toEqual([MAX_KEYTERMS, MAX_KEYTERM_CHARS]);
    expect(tool.speakers_expected.maximum).toBe(MAX_SPEAKERS_EXPECTED);
    expect(tool.redact_pii_policies.items.enum).toEqual([...REDACTION_POLICIES]);
  });

  it('job statuses and request ids: the contract\'s', () => {
    expect(params.status!.schema.enum).toEqual([...JOB_STATUS_NAMES]);
    expect(schemas.TranscriptionJob!.properties!.status!.enum).toEqual([...JOB_STATUS_NAMES]);
    expect((doc.components.headers['X-Request-Id'] as { schema: { pattern: string } }).schema.pattern).toBe(REQUEST_ID_PATTERN.source);
  });
});
