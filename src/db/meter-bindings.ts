// The metering of every subrequest that is not a D1 statement, and of every Durable Object's entry points
// (meter.ts says what an invocation is and why). Each binding is reached through one of these faces:
// - `countedStub`: a Durable Object stub whose every call (RPC method or fetch) is one subrequest of the caller;
//   applied in each class's typed accessor (sessionStub, teamStub, hubStub, limiterStub, jobStub);
// - `counted`: R2, Vectorize and Workers AI bindings, one subrequest per method call;
// - `meteredFetch`: fetch to another host (the observer's provider, the local sentence model);
// - `meterDurableObject`: a Durable Object class whose every RPC method and alarm runs as its own invocation.
import type { ConfigInput } from '../config';
import { countSubrequest, invocation } from './meter';

/** `target` with each method call counted as one subrequest named `what.method`. */
function countingProxy<T extends object>(target: T, what: string): T {
  return new Proxy(target, {
    get(t, prop) {
      // The binding's own object as receiver: its methods check their `this`.
      const v: unknown = Reflect.get(t, prop, t);
      if (typeof v !== 'function' || typeof prop === 'symbol' || prop === 'constructor') return v;
      const method = v as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        countSubrequest(1, `${what}.${prop}`);
        return Reflect.apply(method, t, args);
      };
    },
  });
}

const countedBindings = new WeakMap<object, object>();

/** An R2, Vectorize or Workers AI binding whose every call is a counted subrequest (one face per binding). */
export function counted<T extends object>(binding: T, what: string): T {
  let c = countedBindings.get(binding) as T | undefined;
  if (!c) {
    c = countingProxy(binding, what);
    countedBindings.set(binding, c);
  }
  return c;
}

/**
 * The Worker's own static assets, each read counted as a subrequest: Cloudflare does not say whether it is one, so
 * it is counted as if it were (a page or the client download reads one or two).
 */
export const assets = (env: { ASSETS: Fetcher }): Fetcher => counted(env.ASSETS, 'assets');

/** A Durable Object stub whose every call is a subrequest of the invocation that makes it. */
export function countedStub<T extends Rpc.DurableObjectBranded | undefined>(
  stub: DurableObjectStub<T>,
  what: string,
): DurableObjectStub<T> {
  return countingProxy(stub, what);
}

/** `fetch` to another host, counted as a subrequest. */
export const meteredFetch: typeof fetch = (input, init) => {
  countSubrequest(1, 'a fetch');
  return fetch(input, init);
};

const METERED = Symbol('metered entry point');

/** Whether a Durable Object method is metered (tests check every class's methods). */
export const isMeteredMethod = (fn: unknown): boolean =>
  typeof fn === 'function' && (fn as { [METERED]?: boolean })[METERED] === true;

/**
 * Makes every RPC method and the alarm of a Durable Object class an invocation of its own, labelled
 * `<kind> <method>` (a method it calls on itself stays in the caller's invocation). `own` names methods that open
 * their invocation themselves (the JobDO's alarm, labelled by the job it steps).
 */
export function meterDurableObject(
  cls: { prototype: object; name: string },
  kind: string,
  own: readonly string[] = [],
): void {
  const proto = cls.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name === 'constructor' || !d || typeof d.value !== 'function') continue;
    const method = d.value as (...args: unknown[]) => unknown;
    if (own.includes(name)) {
      Object.defineProperty(method, METERED, { value: true });
      continue;
    }
    if (isMeteredMethod(method)) continue;
    const label = `${kind} ${name}`;
    const entry = function (this: { env: ConfigInput }, ...args: unknown[]): unknown {
      return invocation(this, this.env, label, () => method.apply(this, args));
    };
    Object.defineProperty(entry, METERED, { value: true });
    Object.defineProperty(entry, 'name', { value: name });
    Object.defineProperty(proto, name, { ...d, value: entry });
  }
}
