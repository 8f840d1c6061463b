// env.ts declares the Durable Object bindings untyped so that it imports no feature module (the DO classes
// import env.ts). Each DO module narrows its own binding once, beside the class, through this helper.

/** The binding typed as a namespace of `T`; wrangler.toml is what guarantees the binding holds that class. */
export function namespaceOf<T extends Rpc.DurableObjectBranded>(ns: DurableObjectNamespace): DurableObjectNamespace<T> {
  return ns as unknown as DurableObjectNamespace<T>;
}
