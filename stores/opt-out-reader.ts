// Whether a number is opted out of a project, read from KV at the moment of asking: for the
// worker, which checks a scheduled message's recipient once, at its time (DESIGN §4 Scheduling),
// and keeps no mirror of the list (the gateways check every send from MirroredOptOuts).
import type { KV } from '@nats-io/kv';
import { KV_KEYS } from '../core/bus/names';
import type { OptOuts } from '../core/sms';

export class KvOptOutReader implements OptOuts {
  constructor(private readonly kv: KV) {}

  async isOptedOut(projectId: string, number: string): Promise<boolean> {
    const entry = await this.kv.get(KV_KEYS.optOut(projectId, number));
    return entry !== null && entry.operation === 'PUT' && entry.length > 0;
  }
}
