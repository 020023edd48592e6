import { describe, expect, it } from 'vitest';
import { contentRange, resumeOffset } from './upload';

describe('image upload chunks', () => {
  it('resumes after the last byte the server has', () => {
    expect(resumeOffset('bytes=0-8388607')).toBe(8388608);
    expect(resumeOffset(null)).toBe(0);
    expect(resumeOffset('garbage')).toBe(0);
  });
  it('names each chunk with inclusive bounds', () => {
    expect(contentRange(0, 100, 250)).toBe('bytes 0-99/250');
    expect(contentRange(200, 250, 250)).toBe('bytes 200-249/250');
  });
});
