// Exact money. The API sends dollars as JSON numbers with at most two
// decimals; a JavaScript number (a 64-bit float) holds each of them closely
// enough to round back to its cents, but sums and products of the floats
// drift (0.1 + 0.2). Convert with toCents, count in integer cents, and
// convert back with fromCents only to send an amount.

// toCents converts a dollar amount of the API to integer cents, rounding to
// the nearest cent (1234567.89 is 123456789). It throws a RangeError on a
// value that is not a finite number of safe-integer cents.
export function toCents(dollars: number): number {
  const cents = Math.round(dollars * 100);
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`${dollars} is not an amount in dollars`);
  }
  return cents === 0 ? 0 : cents; // never -0
}

// fromCents converts integer cents to the dollar amount to send (e.g. as
// expected_total); JSON.stringify writes it as the exact decimal.
export function fromCents(cents: number): number {
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`${cents} is not a whole number of cents`);
  }
  return cents / 100;
}

// formatCents renders cents with two decimals, e.g. "1234567.89".
export function formatCents(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}
