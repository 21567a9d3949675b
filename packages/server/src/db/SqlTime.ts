/** Timestamps from the database (the driver hands `timestamptz` over as a `Date`) as the wire's ISO-8601 strings. */
export const iso = (value: Date | string): string => (value instanceof Date ? value : new Date(value)).toISOString()

export const isoOrNull = (value: Date | string | null | undefined): string | null =>
  value === null || value === undefined ? null : iso(value)

/** `now() + ms` in SQL needs the milliseconds as an interval multiplier; a whole number keeps the cast exact. */
export const wholeMillis = (ms: number): number => Math.max(0, Math.round(ms))
