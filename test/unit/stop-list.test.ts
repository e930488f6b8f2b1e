// The composition root's stop list (src/stop-list.ts): stops run last added first, a failing
// step does not keep the rest from stopping and its error is thrown after them, and a second
// close waits for the first instead of stopping twice.
import { describe, expect, it } from 'vitest';
import { StopList } from '../../src/stop-list.js';

describe('StopList', () => {
  it('stops in reverse order of adding', async () => {
    const stops = new StopList();
    const ran: string[] = [];
    for (const name of ['log', 'kafka', 'engine', 'http', 'consumers'])
      stops.add(name, async () => {
        await Promise.resolve();
        ran.push(name);
      });
    expect(stops.order).toEqual(['consumers', 'http', 'engine', 'kafka', 'log']);
    await stops.stopAll();
    expect(ran).toEqual(['consumers', 'http', 'engine', 'kafka', 'log']);
  });

  it('runs every step when one fails, then throws the first failure naming its step', async () => {
    const stops = new StopList();
    const ran: string[] = [];
    stops.add('log', () => void ran.push('log'));
    stops.add('engine', () => {
      throw new Error('flush failed');
    });
    stops.add('kafka', () => Promise.reject(new Error('broker gone')));
    await expect(stops.stopAll()).rejects.toThrow('stopping kafka: broker gone');
    expect(ran).toEqual(['log']);
  });

  it('stops once when closed twice', async () => {
    const stops = new StopList();
    let n = 0;
    stops.add('log', async () => {
      n++;
    });
    await Promise.all([stops.stopAll(), stops.stopAll()]);
    await stops.stopAll();
    expect(n).toBe(1);
  });
});
