// The wall clock, read here until issue 26's clock port replaces it: cluster coordinators stamp
// each command with it (the command's commit time, and the "now" every holder computes with).
export type WallClock = () => number;

export const systemWallClock: WallClock = () => Date.now();
