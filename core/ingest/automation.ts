// The automation window (spec 2 §4 rule 6): an event triggers automations only when
// |_event_date − reception| ≤ 1 hour; an omitted date is the reception time, so it always does.
export const AUTOMATION_WINDOW_MS = 3600 * 1000;

export function automationWindowHolds(eventDateMs: number, receivedAtMs: number): boolean {
  return Math.abs(eventDateMs - receivedAtMs) <= AUTOMATION_WINDOW_MS;
}
