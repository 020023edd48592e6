import { describe, expect, it } from 'vitest';
import { formatDateTime, formatNumber, formatSize, formatSizeOf, fromLocalInput, relativeTime, sizeParts, toLocalInput } from './format';

describe('formatNumber', () => {
  it('groups digits the way the locale does', () => {
    expect(formatNumber(1234567, 0, 'en-US')).toBe('1,234,567');
    expect(formatNumber(1234567, 0, 'de-DE')).toBe('1.234.567');
  });
  it('keeps at most the decimals asked for', () => {
    expect(formatNumber(0.84, 1, 'en-US')).toBe('0.8');
    expect(formatNumber(2.5, 0, 'en-US')).toBe('3');
    expect(formatNumber(1.5, 1, 'de-DE')).toBe('1,5');
  });
});

describe('sizes', () => {
  it('picks the largest binary unit that keeps the number at 1 or more', () => {
    expect(formatSize(512, 'MiB', 'en-US')).toBe('512 MiB');
    expect(formatSize(1536, 'MiB', 'en-US')).toBe('1.5 GiB');
    expect(formatSize(65536, 'MiB', 'en-US')).toBe('64 GiB');
    expect(formatSize(44040192, 'MiB', 'en-US')).toBe('42 TiB');
    expect(formatSize(500, 'GiB', 'en-US')).toBe('500 GiB');
    expect(formatSize(2048, 'GiB', 'en-US')).toBe('2 TiB');
    expect(formatSize(0, 'GiB', 'en-US')).toBe('0 GiB');
  });
  it('formats the number in the locale', () => {
    expect(formatSize(1000, 'GiB', 'en-US')).toBe('1,000 GiB');
    expect(formatSize(1536, 'GiB', 'de-DE')).toBe('1,5 TiB');
  });
  it('writes used of total in the unit of the total', () => {
    expect(formatSizeOf(12 * 1024, 64 * 1024, 'MiB', 'en-US')).toBe('12/64 GiB');
    expect(formatSizeOf(512, 2048, 'GiB', 'en-US')).toBe('0.5/2 TiB');
    expect(formatSizeOf(512, 2048 * 1024, 'MiB', 'en-US')).toBe('<0.1/2 TiB');
    expect(formatSizeOf(0, 1000 * 1024, 'MiB', 'en-US')).toBe('0/1,000 GiB');
    expect(formatSizeOf(1024, 2048, 'GiB', 'en-US')).toBe('1/2 TiB');
    expect(formatSizeOf(300, 0, 'MiB', 'en-US')).toBe('300 MiB/∞');
  });
  it('splits a size into number and unit', () => {
    expect(sizeParts(3 * 1024 * 1024, 'MiB')).toEqual({ value: 3, unit: 'TiB' });
    expect(sizeParts(10, 'GiB')).toEqual({ value: 10, unit: 'GiB' });
  });
});

describe('dates', () => {
  it('writes a date and time in the locale, to the minute', () => {
    const iso = '2026-11-21T15:42:31Z';
    const want = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' }).format(Date.parse(iso));
    expect(formatDateTime(iso, 'en-US')).toBe(want);
    expect(formatDateTime(iso, 'en-US')).toMatch(/^Nov 2[12], 2026, \d{1,2}:42\s?[AP]M$/);
  });
  it('writes a dash for a missing or invalid time', () => {
    expect(formatDateTime(null)).toBe('—');
    expect(formatDateTime('garbage')).toBe('—');
  });
  it('says how long ago or how soon', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(relativeTime('2026-11-21T11:59:58Z', now, 'en-US')).toBe('now');
    expect(relativeTime('2026-11-21T11:59:30Z', now, 'en-US')).toBe('30 sec. ago');
    expect(relativeTime('2026-11-21T11:55:00Z', now, 'en-US')).toBe('5 min. ago');
    expect(relativeTime('2026-11-21T09:00:00Z', now, 'en-US')).toBe('3 hr. ago');
    expect(relativeTime('2026-11-19T12:00:00Z', now, 'en-US')).toBe('2 days ago');
    expect(relativeTime('2026-11-21T14:00:00Z', now, 'en-US')).toBe('in 2 hr.');
    expect(relativeTime('2026-11-21T11:00:00Z', now, 'de-DE')).toBe('vor 1 Std.');
    expect(relativeTime(null, now)).toBe('—');
    expect(relativeTime('garbage', now)).toBe('—');
  });
});

describe('datetime-local inputs', () => {
  it('round-trips a time to the minute in the browser zone', () => {
    const d = new Date(2030, 0, 2, 3, 4, 59); // local time
    const v = toLocalInput(d);
    expect(v).toBe('2030-01-02T03:04');
    expect(fromLocalInput(v)).toBe(new Date(2030, 0, 2, 3, 4, 0).toISOString());
  });
  it('refuses what is not a datetime-local value', () => {
    expect(fromLocalInput('')).toBeNull();
    expect(fromLocalInput('tomorrow')).toBeNull();
    expect(fromLocalInput('2030-13-40T99:99')).toBeNull();
  });
});
