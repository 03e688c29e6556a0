import { describe, expect, it } from 'vitest';
import { submissionText } from '../../src/forms/submission-text.ts';

const fields = [
  { name: 'contact', label: 'Your name' },
  { name: 'vegan', label: 'Vegan' },
  { name: 'extras', label: 'Extras' },
  { name: 'notes', label: 'Notes' },
];
const id = '0193a1b2c3d47e8f9a0b1c2d3e4f5a91';

describe('a submission as text', () => {
  it('writes answers under their labels in the form’s order, leaving unanswered fields out', () => {
    expect(submissionText(fields, { notes: 'Late arrival', contact: 'Dana' }, id)).toBe(
      'Your name: Dana\nNotes: Late arrival',
    );
  });

  it('writes yes and no, lists joined by commas, and a dash for empty answers', () => {
    expect(
      submissionText(fields, { vegan: true, extras: ['Cake', 2, false], notes: '  ', contact: null }, id),
    ).toBe('Your name: —\nVegan: yes\nExtras: Cake, 2, no\nNotes: —');
    expect(submissionText(fields, { vegan: false, extras: [] }, id)).toBe('Vegan: no\nExtras: —');
  });

  it('puts an answer of several lines under its label, each line indented', () => {
    expect(submissionText(fields, { notes: 'one\r\ntwo\rthree\nfour' }, id)).toBe(
      'Notes:\n  one\n  two\n  three\n  four',
    );
  });

  it('keeps answers to fields the form no longer has, under their names, after the rest', () => {
    expect(submissionText(fields, { budget: 1200, contact: 'Dana', room: { floor: 2 } }, id)).toBe(
      'Your name: Dana\nbudget: 1200\nroom: {"floor":2}',
    );
  });

  it('is null when nothing was answered', () => {
    expect(submissionText(fields, {}, id)).toBeNull();
  });

  it('cuts at the limit in characters, never inside one, and says where the whole submission is', () => {
    const marker = `\n… (cut to 200 characters; the whole submission is form submission ${id})`;
    const text = submissionText(fields, { notes: '😀'.repeat(300) }, id, 200) ?? '';
    expect([...text]).toHaveLength(200);
    expect(text.endsWith(marker)).toBe(true);
    expect(text.startsWith('Notes: 😀')).toBe(true);
    expect(text.toWellFormed()).toBe(text);
    // Exactly at the limit: whole.
    const exact = `Notes: ${'a'.repeat(193)}`;
    expect(submissionText(fields, { notes: 'a'.repeat(193) }, id, 200)).toBe(exact);
  });
});
