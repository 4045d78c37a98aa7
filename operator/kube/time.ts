// The API's two timestamp formats: metav1.Time (RFC 3339, whole seconds) and metav1.MicroTime (six fractional digits).

/** metav1.Time: `2026-11-30T12:00:00Z`, as conditions and Event timestamps carry it. */
export function rfc3339(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime: `2026-11-30T12:00:00.123000Z`, as Lease times carry it. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
