// The SMPP command statuses (v3.4 §5.1.3, v5.0 §4.7.6) that our SMPP endpoints send or read
// by name: the customer server, the carrier connector and the carrier simulator share this one
// table. The error registry (core/errors.ts) keeps the numbers it maps refusals to, because the
// core must not import a gateway; this table starts from those and adds the protocol-level ones.
import { SMPP_STATUS } from '../../../core/errors';

export const STATUS = {
  ...SMPP_STATUS,
  ESME_RINVCMDLEN: 0x00000002,
  ESME_RINVCMDID: 0x00000003,
  ESME_RINVBNDSTS: 0x00000004,
  ESME_RALYBND: 0x00000005,
  ESME_RBINDFAIL: 0x0000000d,
  ESME_RMSGQFUL: 0x00000014,
  ESME_RINVSCHED: 0x00000061,
  ESME_RINVEXPIRY: 0x00000062,
  ESME_RX_T_APPN: 0x00000064,
  ESME_RQUERYFAIL: 0x00000067,
} as const;

export type StatusName = keyof typeof STATUS;

/** The status's name, or its number in hex when the table does not know it (logs). */
export function statusName(status: number): string {
  const found = (Object.keys(STATUS) as StatusName[]).find((name) => STATUS[name] === status);
  return found ?? `0x${status.toString(16).padStart(8, '0')}`;
}
