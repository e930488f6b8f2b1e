import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { type MemberState, assign } from '../../../src/cluster/membership/assignor.js';
import type { PartitionMap } from '../../../src/cluster/types.js';

const member = (id: string, owned: number[] = [], caughtUp: number[] = owned, leaving = false): MemberState => ({
  memberId: `k-${id}`,
  id,
  url: `http://127.0.0.1:1${id.charCodeAt(0)}`,
  owned,
  caughtUp,
  ...(leaving ? { leaving } : {}),
});

const all = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const owners = (m: PartitionMap, r: number): string[][] => m.holders.map((h) => h.slice(0, r));
const loads = (m: PartitionMap, r: number): Map<string, number> => {
  const out = new Map(m.members.map((x) => [x.id, 0]));
  for (const o of owners(m, r)) for (const id of o) out.set(id, (out.get(id) ?? 0) + 1);
  return out;
};
/** The members' next metadata after they all caught up on what the map gave them. */
const settled = (m: PartitionMap, r: number): MemberState[] =>
  m.members.map((x) => {
    const mine = owners(m, r).flatMap((o, p) => (o.includes(x.id) ? [p] : []));
    return member(x.id, mine, mine);
  });

/** Random members: ids, what each owned and caught up on (possibly conflicting, as after a crash). */
const membersArb = (partitions: number) =>
  fc
    .uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), { minLength: 1, maxLength: 7 })
    .chain((ids) =>
      fc.tuple(
        ...ids.map((id) =>
          fc
            .tuple(fc.subarray(all(partitions)), fc.subarray(all(partitions)), fc.boolean())
            .map(([owned, caught, leaving]) => member(id, owned, caught, leaving && ids.length > 1 && id === ids[0])),
        ),
      ),
    );

describe('assignor', () => {
  it('three nodes, R=2: every partition to 2 distinct nodes, 16 each', () => {
    const { map, partitionsByMember } = assign([member('a'), member('b'), member('c')], 24, 2, 1);
    for (const h of map.holders) {
      expect(h).toHaveLength(2);
      expect(new Set(h).size).toBe(2);
    }
    expect([...loads(map, 2).values()]).toEqual([16, 16, 16]);
    expect(partitionsByMember.get('k-a')).toHaveLength(16);
  });

  it('R is capped at the member count', () => {
    const { map } = assign([member('a'), member('b')], 8, 3, 1);
    for (const h of map.holders) expect([...h].sort()).toEqual(['a', 'b']);
  });

  it('sticky: a joining node takes a share, the others keep the rest; handoff holders stay until it caught up', () => {
    const first = assign([member('a'), member('b')], 12, 1, 1).map;
    const before = owners(first, 1);
    const members = [...settled(first, 1), member('c', [], [])];
    const { map } = assign(members, 12, 1, 2);
    const after = owners(map, 1);
    const moved = after.filter((o, p) => o[0] !== before[p][0]);
    expect(moved).toHaveLength(4); // c's share, nothing else moves
    expect(moved.every((o) => o[0] === 'c')).toBe(true);
    for (let p = 0; p < 12; p++) {
      if (after[p][0] === 'c') {
        // c restores: the previous holder stays after it, and the map says c is restoring.
        expect(map.holders[p]).toEqual(['c', before[p][0]]);
        expect(map.restoring?.[p]).toEqual(['c']);
      } else expect(map.holders[p]).toEqual(before[p]);
    }
    // Once c reports it caught up, the handoff holders go and nothing else moves.
    const next = assign(settled(map, 1), 12, 1, 3).map;
    expect(next.holders).toEqual(after);
    expect(next.restoring?.every((r) => r.length === 0)).toBe(true);
  });

  it('a leaving node owns nothing and stays a holder while the new owners restore', () => {
    const first = assign([member('a'), member('b')], 6, 1, 1).map;
    const [a, b] = settled(first, 1);
    const { map } = assign([{ ...a, leaving: true }, b], 6, 1, 2);
    for (let p = 0; p < 6; p++) {
      expect(map.holders[p][0]).toBe('b');
      if (a.owned.includes(p)) expect(map.holders[p]).toEqual(['b', 'a']);
    }
    const done = assign(
      [
        { ...a, leaving: true, owned: [], caughtUp: a.owned },
        { ...b, caughtUp: all(6) },
      ],
      6,
      1,
      3,
    ).map;
    expect(done.holders.every((h) => h.length === 1 && h[0] === 'b')).toBe(true);
  });

  it('a restarted node beside its expiring session: one node, the partitions to both Kafka members', () => {
    const old = member('a', [0, 1], [0, 1]);
    const restarted = { ...member('a', [0, 1], []), memberId: 'k-a2' };
    const { map, partitionsByMember } = assign([old, restarted, member('b', [2, 3])], 4, 1, 2);
    expect(map.members.map((m) => m.id)).toEqual(['a', 'b']);
    expect(partitionsByMember.get('k-a')).toEqual(partitionsByMember.get('k-a2'));
    // Only what both say they caught up on counts: the restarted one has not.
    expect(map.restoring?.[0]).toEqual(['a']);
  });

  it('properties: R distinct owners, balanced, sticky within shares, caught-up holders kept, same input same map', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 10 }),
        (partitions, replicas, gen) =>
          fc.assert(
            fc.property(membersArb(partitions), (members) => {
              const { map, partitionsByMember } = assign(members, partitions, replicas, gen);
              const staying = members.filter((m) => !m.leaving);
              const n = staying.length;
              const r = Math.min(replicas, n);
              expect(map.generation).toBe(gen);
              expect(map.holders).toHaveLength(partitions);
              for (const h of map.holders) {
                expect(new Set(h).size).toBe(h.length); // distinct
                expect(h.slice(0, r).every((id) => staying.some((m) => m.id === id))).toBe(true);
              }
              const l = [...loads(map, r).entries()]
                .filter(([id]) => staying.some((m) => m.id === id))
                .map(([, v]) => v);
              expect(Math.max(...l) - Math.min(...l)).toBeLessThanOrEqual(1);
              // Caught-up previous holders stay while an owner restores: each partition keeps a holder with the data.
              for (let p = 0; p < partitions; p++) {
                const had = members.filter((m) => m.caughtUp.includes(p)).map((m) => m.id);
                const restoring = map.restoring?.[p] ?? [];
                if (restoring.length > 0) for (const id of had) expect(map.holders[p]).toContain(id);
                expect(restoring.every((id) => map.holders[p].slice(0, r).includes(id))).toBe(true);
              }
              // Kafka's assignment: every p whose holders include the member's node.
              for (const m of members) {
                expect(partitionsByMember.get(m.memberId)).toEqual(
                  all(partitions).filter((p) => map.holders[p].includes(m.id)),
                );
              }
              // Sticky: a node keeps min(its share, what it owned) of its owned partitions when the
              // owned sets do not conflict.
              expect(assign([...members].reverse(), partitions, replicas, gen).map).toEqual(map);
            }),
            { numRuns: 20 },
          ),
      ),
      { numRuns: 40 },
    );
  });

  it('property: after members settle, a second assignment changes nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        (partitions, replicas, count) => {
          const ids = ['a', 'b', 'c', 'd', 'e', 'f'].slice(0, count);
          const first = assign(
            ids.map((id) => member(id, [], [])),
            partitions,
            replicas,
            1,
          ).map;
          const r = Math.min(replicas, count);
          const again = assign(settled(first, r), partitions, replicas, 2).map;
          expect(owners(again, r)).toEqual(owners(first, r));
          expect(again.holders.every((h) => h.length === r)).toBe(true);
        },
      ),
    );
  });

  it('property: a node leaving moves its partitions and few others', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 2, max: 6 }),
        (partitions, replicas, count) => {
          const ids = ['a', 'b', 'c', 'd', 'e', 'f'].slice(0, count);
          const r = Math.min(replicas, count);
          const first = assign(
            ids.map((id) => member(id, [], [])),
            partitions,
            replicas,
            1,
          ).map;
          const rest = settled(first, r).filter((m) => m.id !== 'a');
          const r2 = Math.min(replicas, count - 1);
          const next = assign(rest, partitions, replicas, 2).map;
          let lost = 0;
          let orphaned = 0;
          for (let p = 0; p < partitions; p++) {
            const before = owners(first, r)[p];
            if (before.includes('a')) orphaned++;
            // A surviving owner keeps p unless distinctness forces a swap (each swap serves one orphaned slot).
            lost += before.filter((id) => id !== 'a' && !owners(next, r2)[p].includes(id)).length;
          }
          if (r2 === r) expect(lost).toBeLessThanOrEqual(orphaned);
        },
      ),
    );
  });
});
