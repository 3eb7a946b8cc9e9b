// Number (HLR) lookup providers. The shipped provider is a deterministic simulator (DESIGN
// §4): the last digit of the number picks the answer, so tests and demos are repeatable.
//   last digit 0-5  active subscriber, home network
//   last digit 6    active, roaming
//   last digit 7    active, ported to another network
//   last digit 8    absent subscriber (statusCode 2, absent temporarily)
//   last digit 9    unknown subscriber (status failed, statusCode 3, absent permanently)
import { createHash } from 'node:crypto';

export type { HlrAnswer } from '../bus/records';
import type { HlrAnswer } from '../bus/records';

export interface HlrProvider {
  lookup(normalizedTo: string, country: string): Promise<HlrAnswer>;
}

const NETWORKS: Readonly<Record<string, readonly string[]>> = {
  DE: ['Telekom', 'Vodafone', 'O2'], FR: ['Orange', 'SFR', 'Bouygues'], GB: ['EE', 'Vodafone', 'O2', 'Three'],
  ES: ['Movistar', 'Vodafone', 'Orange'], IT: ['TIM', 'Vodafone', 'WindTre'], US: ['Verizon', 'AT&T', 'T-Mobile'],
};

export class SimulatedHlr implements HlrProvider {
  async lookup(normalizedTo: string, country: string): Promise<HlrAnswer> {
    const digits = normalizedTo.replace(/\D/g, '');
    const last = Number(digits.at(-1) ?? '0');
    const hash = createHash('sha256').update(digits).digest();
    const networks = NETWORKS[country] ?? [`${country} Mobile`, `${country} Telecom`];
    const home = networks[(hash[0] ?? 0) % networks.length] ?? networks[0] ?? 'unknown';
    const other = networks[((hash[0] ?? 0) + 1) % networks.length] ?? home;
    const imsi = `${String(200 + ((hash[1] ?? 0) % 700)).padStart(3, '0')}${String(hash.readUInt32BE(2)).padStart(12, '0').slice(0, 12)}`;
    const msc = `${digits.slice(0, 4)}${String(hash.readUInt16BE(6)).padStart(6, '0')}`;
    if (last === 9) return { status: 'failed', statusCode: 3, subscriberStatus: 'unknown', imsi: null, servingMsc: null, ported: false, roaming: false, network: home };
    if (last === 8) return { status: 'delivered', statusCode: 2, subscriberStatus: 'absent', imsi, servingMsc: null, ported: false, roaming: false, network: home };
    return { status: 'delivered', statusCode: 0, subscriberStatus: 'active', imsi, servingMsc: msc, ported: last === 7, roaming: last === 6, network: last === 7 ? other : home };
  }
}
