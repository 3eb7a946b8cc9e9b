// Money is kept as integer micro-units (1/1,000,000 of the currency unit) so that charges
// and refunds add up exactly; the wire shows decimal numbers.
export const MICROS = 1_000_000;

export function toMicros(amount: number): number {
  return Math.round(amount * MICROS);
}

export function fromMicros(micros: number): number {
  return micros / MICROS;
}
