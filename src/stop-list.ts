// The composition root's one list of things to stop: each part of the server, as it is opened or
// started, adds how to stop it; closing stops them in reverse order (last opened, first stopped),
// so nothing is stopped while a part opened after it still uses it. A failed boot stops what was
// opened so far the same way.
import type { Logger } from 'pino';
import type { Config } from './config/config.js';

/** What every step of the composition is given: the settings, the log, the fatal path, the stop list. */
export interface Boot {
  cfg: Config;
  logger: Logger;
  onFatal: (err: Error) => void;
  stops: StopList;
}

export class StopList {
  private readonly steps: { name: string; stop: () => Promise<void> | void }[] = [];
  private stopping: Promise<void> | undefined;

  add(name: string, stop: () => Promise<void> | void): void {
    this.steps.push({ name, stop });
  }

  /** The names in the order they will stop. */
  get order(): string[] {
    return this.steps.map((s) => s.name).reverse();
  }

  /**
   * Stops every step, last added first. A step that fails does not keep the others from
   * stopping (a database left open would hold the directory's lock); the first failure is
   * thrown once all have run. A second call waits for the first.
   */
  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      let first: unknown;
      for (const step of [...this.steps].reverse()) {
        try {
          await step.stop();
        } catch (err) {
          first ??= err instanceof Error ? new Error(`stopping ${step.name}: ${err.message}`, { cause: err }) : err;
        }
      }
      if (first !== undefined) throw first;
    })();
    return this.stopping;
  }
}
