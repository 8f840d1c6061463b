// Clock access in one place so pure code can take `now` as a parameter and shells pass Date.now().
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
