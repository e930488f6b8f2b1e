// The assignor as kafkajs runs it: each member's group metadata carries its MemberState (node
// id, advertised URL, owned and caught-up partitions, the generation of its last map); the
// leader runs assign() and writes the whole PartitionMap into every member's assignment
// userData. kafkajs hands a member only its partitions, so membership.ts reads the map back from
// the group description (decodeMap).
import type { Assigner, GroupMember, PartitionAssigner } from 'kafkajs';
import { kafkajs } from '../../kafka/kafkajs.js';
import { type MemberState, assign } from './assignor.js';
import type { PartitionMap } from '../types.js';

export const ASSIGNOR_NAME = 'bitledger-holders';
const VERSION = 1;

/** What this member says at each join; `nudge` marks a member that only triggers a rebalance. */
export type JoinState = Omit<MemberState, 'memberId'> & { readonly generation: number; readonly nudge?: boolean };

export interface AssignorOptions {
  /** Read at every join: the metadata must be current (caught-up partitions change). */
  state(): JoinState;
  partitions: number;
  replicas: number;
}

export function bitledgerAssignor(opts: AssignorOptions): PartitionAssigner {
  return (): Assigner => ({
    name: ASSIGNOR_NAME,
    version: VERSION,
    protocol: ({ topics }) => ({
      name: ASSIGNOR_NAME,
      metadata: kafkajs().AssignerProtocol.MemberMetadata.encode({
        version: VERSION,
        topics,
        userData: Buffer.from(JSON.stringify(opts.state())),
      }),
    }),
    async assign({ members, topics }) {
      const states = members.flatMap((m) => {
        const s = decodeState(m);
        return s === undefined || s.nudge === true ? [] : [s];
      });
      const generation = Math.max(0, ...states.map((s) => s.generation)) + 1;
      const { map, partitionsByMember } = assign(states, opts.partitions, opts.replicas, generation);
      const userData = Buffer.from(JSON.stringify(map));
      return members.map((m) => ({
        memberId: m.memberId,
        memberAssignment: kafkajs().AssignerProtocol.MemberAssignment.encode({
          version: VERSION,
          assignment: Object.fromEntries(topics.map((t) => [t, partitionsByMember.get(m.memberId) ?? []])),
          userData,
        }),
      }));
    },
  });
}

function decodeState(m: GroupMember): (MemberState & { generation: number; nudge?: boolean }) | undefined {
  try {
    const { userData } = kafkajs().AssignerProtocol.MemberMetadata.decode(m.memberMetadata) ?? {};
    if (userData === undefined || userData.length === 0) return undefined;
    const s = JSON.parse(userData.toString('utf8')) as JoinState;
    if (typeof s.id !== 'string' || typeof s.url !== 'string') return undefined;
    return {
      memberId: m.memberId,
      id: s.id,
      url: s.url,
      owned: Array.isArray(s.owned) ? s.owned : [],
      caughtUp: Array.isArray(s.caughtUp) ? s.caughtUp : [],
      generation: Number.isInteger(s.generation) ? s.generation : 0,
      nudge: s.nudge === true,
      leaving: s.leaving === true,
    };
  } catch {
    // A member speaking another format gets nothing rather than breaking the group.
    return undefined;
  }
}

/** The map and this member's partitions from an assignment buffer (undefined: none in it). */
export function decodeMap(memberAssignment: Buffer): { map: PartitionMap; partitions: number[] } | undefined {
  if (memberAssignment.length === 0) return undefined;
  const a = kafkajs().AssignerProtocol.MemberAssignment.decode(memberAssignment);
  if (a === null || a.userData.length === 0) return undefined;
  const map = JSON.parse(a.userData.toString('utf8')) as PartitionMap;
  const partitions = Object.values(a.assignment)[0] ?? [];
  return { map, partitions: [...partitions].sort((x, y) => x - y) };
}
