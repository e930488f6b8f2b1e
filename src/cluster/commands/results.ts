// The outcomes of recently applied commands, by (topic, partition, offset of the command's last
// message), for the coordinators that wrote them (GET /internal/cluster/result). Bounded: the
// oldest go first; a coordinator asks within moments of its write, and asks another holder when
// one no longer has it (after a restart, say).
import type { CommandResult } from './command.js';
import type { ClusterTopic } from '../types.js';

export class CommandResults {
  private readonly kept = new Map<string, CommandResult>();

  constructor(private readonly max: number) {}

  set(topic: ClusterTopic, partition: number, offset: string, r: CommandResult): void {
    const key = `${topic}/${partition}/${offset}`;
    this.kept.set(key, r);
    if (this.kept.size > this.max) {
      const oldest = this.kept.keys().next().value;
      if (oldest !== undefined) this.kept.delete(oldest);
    }
  }

  get(topic: ClusterTopic, partition: number, offset: string): CommandResult | undefined {
    return this.kept.get(`${topic}/${partition}/${offset}`);
  }
}
