// The automatic reply to a HELP-family keyword (DESIGN §4 "Two-way"; core/sms/opt-out.ts): the
// token's help text, sent as an ordinary outbound message of the token through the acceptance
// core (checked, priced and charged like any send), from the number that received the HELP to
// the handset. Its clientId is derived from the inbound's id, so a redelivered inbound replays
// the same message instead of sending a second one.
import { createHash } from 'node:crypto';
import type { Organization } from '../core/accounts';
import type { HelpReplies, SmsAcceptance } from '../core/sms';

export function helpReplyClientId(inboundId: string): string {
  return `help-${createHash('sha256').update(inboundId).digest('hex').slice(0, 32)}`;
}

export function acceptanceHelpReplies(acceptance: Pick<SmsAcceptance, 'submitOne'>, orgs: { org(id: string): Organization | undefined }): HelpReplies {
  return {
    send: async (token, reply, inboundId) => {
      const org = orgs.org(token.orgId);
      if (!org || !token.projectId) throw new Error(`HELP reply: organization ${token.orgId} of token ${token.id} is not in the directory yet`);
      await acceptance.submitOne(
        { orgId: token.orgId, projectId: token.projectId, tokenId: token.id, source: 'http', currency: org.currency },
        { from: reply.from, to: reply.to, text: reply.text, clientId: helpReplyClientId(inboundId) },
      );
    },
  };
}
