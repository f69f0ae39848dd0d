/**
 * The redaction detectors against a table of real-world formats, per policy: each valid value,
 * written as whisper and OpenAI-compatible servers write it and spoken as pocketsphinx writes
 * it (lower-case words, no digits, no punctuation), is replaced; each near miss (a bad check
 * digit, an unallocated number, an octet over 255) is left exactly as it was.
 */
import { REDACTION_POLICIES, type RedactionPolicy } from '@murmur/contract';
import { redactTimeline } from '../src/redaction/redact-timeline';

function redactText(text: string, policies: readonly RedactionPolicy[] = REDACTION_POLICIES): string {
  return redactTimeline({ text, segments: [], words: [], speakers: [] }, { policies: [...policies], style: 'entity_name' }).timeline.text;
}

type Row = [input: string, output: string];

const TABLE: Record<RedactionPolicy, { redacted: Row[]; kept: string[] }> = {
  email_address: {
    redacted: [
      ['write to john@example.com today', 'write to [EMAIL_ADDRESS] today'],
      ['Email: J.Smith+news@Example.CO.UK.', 'Email: [EMAIL_ADDRESS].'],
      ['(mary_o-neil@mail.example.org)', '([EMAIL_ADDRESS])'],
      ['its john at example dot com', 'its [EMAIL_ADDRESS]'],
      ['email me at john dot smith at gmail dot com please', 'email me at [EMAIL_ADDRESS] please'],
      ['my address is jane underscore doe at example dot org', 'my address is [EMAIL_ADDRESS]'],
      ['spell it j o h n at i b m dot com', 'spell it [EMAIL_ADDRESS]'],
      ['it is john one two at yahoo dot co dot uk', 'it is [EMAIL_ADDRESS]'],
      ['send it to john at example.com', 'send it to [EMAIL_ADDRESS]'],
    ],
    kept: [
      'look at this dot com bubble',
      'i bought it at amazon dot com',
      'we met at the park dot dot dot',
      'user@localhost is not an address',
      'john@example.c is cut short',
      'meet me at noon',
    ],
  },
  phone_number: {
    redacted: [
      ['call me at 555-123-4567.', 'call me at [PHONE_NUMBER].'],
      ['call (555) 123-4567 or +1 415 555 2671', 'call [PHONE_NUMBER] or [PHONE_NUMBER]'],
      ['555.123.4567', '[PHONE_NUMBER]'],
      ['1-800-555-1212', '[PHONE_NUMBER]'],
      ['London: +44 20 7946 0958', 'London: [PHONE_NUMBER]'],
      ['ring 0044 20 7946 0958 or 020 7946 0958', 'ring [PHONE_NUMBER] or [PHONE_NUMBER]'],
      ['Berlin 030 12345678', 'Berlin [PHONE_NUMBER]'],
      ['her mobile is 07911 123456', 'her mobile is [PHONE_NUMBER]'],
      ['dial 555-1234 now', 'dial [PHONE_NUMBER] now'],
      ['my number is five five five one two three four five six seven', 'my number is [PHONE_NUMBER]'],
      ['double five five one two three four five six seven', '[PHONE_NUMBER]'],
      ['its eight hundred five five five one two one two', 'its [PHONE_NUMBER]'],
      ['five five five one two three twelve thirty four', '[PHONE_NUMBER]'],
      ['my number is five five five one two three four five six seven eight', 'my number is [PHONE_NUMBER] eight'],
      ['plus four four seven nine one one one two three four five six', '[PHONE_NUMBER]'],
      ['call five five five one two three four', 'call [PHONE_NUMBER]'],
      ['Five-five-five, one-two-three, four-five-six-seven.', '[PHONE_NUMBER].'],
      ['five five five dash one two three dash four five six seven', '[PHONE_NUMBER]'],
      ['five five five one to three four five six seven', '[PHONE_NUMBER]'],
    ],
    kept: [
      'five five five one two three four',
      'meet me at five five five',
      '123-4567',
      'count one two three four five six seven eight nine ten',
      'the years 1999 2000 2001 2002 were busy',
      'nine one one',
      'we sold 1,500,000 units for $12,345,678',
      '+0 123 456 789',
    ],
  },
  credit_card_number: {
    redacted: [
      ['Visa 4111 1111 1111 1111.', 'Visa [CREDIT_CARD_NUMBER].'],
      ['4111-1111-1111-1111', '[CREDIT_CARD_NUMBER]'],
      ['card 5500005555555559 expires', 'card [CREDIT_CARD_NUMBER] expires'],
      ['amex 3782 822463 10005', 'amex [CREDIT_CARD_NUMBER]'],
      ['diners 3056 930902 5904', 'diners [CREDIT_CARD_NUMBER]'],
      ['discover 6011 0009 9013 9424', 'discover [CREDIT_CARD_NUMBER]'],
      ['mastercard 2221 0000 0000 0009', 'mastercard [CREDIT_CARD_NUMBER]'],
      ['four one one one one one one one one one one one one one one one', '[CREDIT_CARD_NUMBER]'],
      ['forty one eleven eleven eleven eleven eleven eleven eleven', '[CREDIT_CARD_NUMBER]'],
      ['4111 1111 1111 1111 11', '[CREDIT_CARD_NUMBER] 11'],
    ],
    kept: [
      '4111 1111 1111 1112',
      'four one one one one one one one one one one one one one one two',
      '1111 1111 1111 1117',
    ],
  },
  iban: {
    redacted: [
      ['IBAN GB82 WEST 1234 5698 7654 32.', 'IBAN [IBAN].'],
      ['DE89370400440532013000', '[IBAN]'],
      ['de89 3704 0044 0532 0130 00', '[IBAN]'],
      ['pay FR14 2004 1010 0505 0001 3M02 606 now', 'pay [IBAN] now'],
      ['NO93 8601 1117 947', '[IBAN]'],
      ['MT84 MALT 0110 0001 2345 MTLC AST0 01S', '[IBAN]'],
      ['g b eight two w e s t one two three four five six nine eight seven six five four three two', '[IBAN]'],
      ['d e eighty nine thirty seven oh four double oh four four oh five three two oh one three oh double oh', '[IBAN]'],
    ],
    kept: [
      'GB82 WEST 1234 5698 7654 33',
      'DE89 3704 0044 0532 0130 01',
      'GB82 WEST 1234 5698 7654',
      'XX82 WEST 1234 5698 7654 32',
      'g b eight two w e s t one two three four five six nine eight seven six five four three three',
    ],
  },
  us_social_security_number: {
    redacted: [
      ['SSN 123-45-6789', 'SSN [US_SOCIAL_SECURITY_NUMBER]'],
      ['it is 078 05 1120.', 'it is [US_SOCIAL_SECURITY_NUMBER].'],
      ['social security number 219099999', 'social security number [US_SOCIAL_SECURITY_NUMBER]'],
      ['my social is one two three four five six seven eight nine', 'my social is [US_SOCIAL_SECURITY_NUMBER]'],
      ['my ssn is five one two, three four, five six seven eight', 'my ssn is [US_SOCIAL_SECURITY_NUMBER]'],
    ],
    kept: [
      '000-12-3456',
      '666-12-3456',
      '912-34-5678',
      '123-00-4567',
      '123-45-0000',
      'my social is six six six one two three four five six',
      'order 219099999 shipped',
    ],
  },
  ip_address: {
    redacted: [
      ['server 192.168.1.10 is down', 'server [IP_ADDRESS] is down'],
      ['connect to 10.0.0.1:8080', 'connect to [IP_ADDRESS]:8080'],
      ['the block 10.0.0.0/8.', 'the block [IP_ADDRESS]/8.'],
      ['ping 255.255.255.255', 'ping [IP_ADDRESS]'],
      ['v6 2001:db8::1 and fe80::1ff:fe23:4567:890a', 'v6 [IP_ADDRESS] and [IP_ADDRESS]'],
      ['[2001:db8:85a3::8a2e:370:7334]:443', '[[IP_ADDRESS]]:443'],
      ['one nine two dot one sixty eight dot one dot ten', '[IP_ADDRESS]'],
      ['ten dot zero dot zero dot one', '[IP_ADDRESS]'],
      ['two fifty five dot two fifty five dot two fifty five dot zero', '[IP_ADDRESS]'],
    ],
    kept: [
      '999.1.1.1',
      '192.168.1',
      '192.168.1.256',
      '1.2.3.4.5',
      'at 12:30:45 sharp',
      'two point oh point one point three',
      'three hundred dot one dot one dot one',
    ],
  },
  date_of_birth: {
    redacted: [
      ['my date of birth is March 15th, 1985.', 'my date of birth is [DATE_OF_BIRTH].'],
      ['I was born on 15 March 1985 in Leeds', 'I was born on [DATE_OF_BIRTH] in Leeds'],
      ['DOB: 03/15/1985', 'DOB: [DATE_OF_BIRTH]'],
      ['dob 1985-03-15', 'dob [DATE_OF_BIRTH]'],
      ['date of birth 15.03.1985', 'date of birth [DATE_OF_BIRTH]'],
      ['born on the fifteenth of march nineteen eighty five', 'born on the [DATE_OF_BIRTH]'],
      ['my birthday is february twenty ninth two thousand', 'my birthday is [DATE_OF_BIRTH]'],
      ['date of birth is june first', 'date of birth is [DATE_OF_BIRTH]'],
      ['d o b october the third nineteen ninety', 'd o b [DATE_OF_BIRTH]'],
      ['D.O.B. 1 May 1990', 'D.O.B. [DATE_OF_BIRTH]'],
      ['born on the twenty-first of June, 2001.', 'born on the [DATE_OF_BIRTH].'],
    ],
    kept: [
      'the meeting is on March 15th, 1985',
      'born 31/02/1985',
      'my birthday is february twenty ninth nineteen ninety nine',
      'i was born in nineteen eighty five',
      'she was born in march',
    ],
  },
  uk_national_insurance_number: {
    redacted: [
      ['NI number AB 12 34 56 C.', 'NI number [UK_NATIONAL_INSURANCE_NUMBER].'],
      ['AB123456C', '[UK_NATIONAL_INSURANCE_NUMBER]'],
      ['it is JG 10 37 28 D', 'it is [UK_NATIONAL_INSURANCE_NUMBER]'],
      ['a b one two three four five six c', '[UK_NATIONAL_INSURANCE_NUMBER]'],
    ],
    kept: ['QQ 12 34 56 C', 'GB 12 34 56 A', 'AB 12 34 56 E', 'AO123456A', 'AB 12 34 56 78', 'ce one two three four five six'],
  },
};

describe.each(REDACTION_POLICIES.map((p) => [p] as const))('%s', (policy) => {
  const { redacted, kept } = TABLE[policy];

  it.each(redacted)('redacts %j', (input, output) => {
    expect(redactText(input)).toBe(output);
    expect(redactText(input, [policy])).toBe(output);
  });

  it('leaves it alone when another policy is asked for', () => {
    const others = REDACTION_POLICIES.filter((p) => p !== policy);
    for (const [input, output] of redacted) {
      expect(redactText(input, others)).not.toBe(output);
      expect(redactText(input, others)).not.toContain(`[${policy.toUpperCase()}]`);
    }
  });

  it.each(kept.map((k) => [k]))('leaves %j as it was', (input) => {
    expect(redactText(input)).toBe(input);
  });
});
