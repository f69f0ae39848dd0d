import { toSrt, toVtt } from '../src/operations/transcript-formats';

const segments = [
  { start: 0, end: 2.5, text: 'Hello there.' },
  { start: 2.5, end: 3661.0421, text: 'A long\n\n\nsecond --> cue.' },
  { start: 3661.05, end: 3662, text: '   ' },
];

describe('transcript formats', () => {
  it('writes SRT cues numbered from 1 with comma milliseconds, skipping empty text', () => {
    expect(toSrt(segments)).toBe('1\n00:00:00,000 --> 00:00:02,500\nHello there.\n\n2\n00:00:02,500 --> 01:01:01,042\nA long\nsecond --> cue.\n');
  });

  it('writes WebVTT with the header, dot milliseconds and no "-->" inside cue text', () => {
    expect(toVtt(segments)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nHello there.\n\n00:00:02.500 --> 01:01:01.042\nA long\nsecond -> cue.\n');
  });

  it.each([
    [[], '', 'WEBVTT\n'],
    [[{ start: -1, end: 0.0004, text: 'x' }], '1\n00:00:00,000 --> 00:00:00,000\nx\n', 'WEBVTT\n\n00:00:00.000 --> 00:00:00.000\nx\n'],
  ])('handles edge input %j', (input, srt, vtt) => {
    expect(toSrt(input)).toBe(srt);
    expect(toVtt(input)).toBe(vtt);
  });
});
