/**
 * A diarized recording reaches the engines as labelled speaker turns (issue 32): the owner of an
 * action item someone takes on ("I will send …") is that speaker's name, and an unnamed speaker
 * is "Speaker N". The local engine reads it as it reads any labelled meeting transcript.
 */
import type { library } from '@murmur/proto';
import { LocalEngine } from '../src/engines/local';
import { recordingText, speakerTurns } from '../src/service';

const transcript = (names: [string, string]): library.Transcript => ({
  text: 'i will send the revised deck to the client by friday can you book the room for monday yes i will book the room for monday',
  language: 'en',
  segments: [
    { startSeconds: 0, endSeconds: 2, text: 'i will send the revised deck to the client by friday', speaker: 'S1' },
    { startSeconds: 2, endSeconds: 3, text: 'can you book the room for monday', speaker: 'S1' },
    { startSeconds: 3, endSeconds: 5, text: 'yes i will book the room for monday', speaker: 'S2' },
  ],
  timeline: { words: undefined, speakers: [{ id: 'S1', name: names[0] }, { id: 'S2', name: names[1] }], wordCount: 0 },
});

describe('speaker turns for conversions', () => {
  it('joins a speaker’s segments into one labelled turn, by name, or "Speaker N" while unnamed', () => {
    expect(speakerTurns(transcript(['Maria', '']))).toBe(
      'Maria: i will send the revised deck to the client by friday can you book the room for monday\nSpeaker 2: yes i will book the room for monday',
    );
    expect(recordingText(transcript(['Maria', 'Ken']))).toMatch(/^Maria: .*\nKen: yes/);
  });

  it('leaves a transcript without speakers as it was', () => {
    const t = transcript(['Maria', 'Ken']);
    expect(speakerTurns({ ...t, timeline: undefined })).toBeNull();
    expect(speakerTurns({ ...t, segments: t.segments.map(({ speaker: _s, ...s }) => s) })).toBeNull();
  });

  it('makes the named speakers the owners of the action items they took on', async () => {
    const artifact = await new LocalEngine().convert({
      transcript: recordingText(transcript(['Maria', 'Ken'])),
      kind: 'action_items',
      instructions: '',
      referenceTime: new Date('2026-11-23T10:00:00Z'),
      signal: new AbortController().signal,
    });
    if (artifact.kind !== 'action_items') throw new Error(artifact.kind);
    const owners = artifact.items.map((i) => i.owner);
    expect(owners).toContain('Maria');
    expect(owners).toContain('Ken');
    expect(owners).not.toContain('Speaker');
  });
});
