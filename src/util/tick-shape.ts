// Keeps the hidden class of Node's nextTick records alive for the life of the process.
// process.nextTick makes each record with a literal of computed (symbol) keys, and V8 remembers
// the class of the record being built at those keys (monomorphic feedback, held weakly). A full
// collection at a moment when no record is alive (the heap trims after an import, an idle
// server's memory-reducing collections) frees that class; V8 then finds the remembered class
// cleared, calls the site megamorphic, and from then on builds every record through the runtime's
// slow property definition, for good. Measured on the HTTP bench (issue 24): after the two trims
// that follow the bench's import, about 1 µs of server CPU a request went to it (8 nextTicks a
// request, perf: Runtime_DefineKeyedOwnPropertyInLiteral, MigrateToMap). One record kept alive
// keeps its class, and the chain of classes it was built through, from being freed.
import { createHook } from 'node:async_hooks';

let kept: object | undefined;

/** Keeps one nextTick record alive (once a process; an async hook for one tick, then none). */
export function keepTickShape(): void {
  if (kept !== undefined) return;
  const hook = createHook({
    init(_id, type, _trigger, resource: object) {
      if (type !== 'TickObject' || kept !== undefined) return;
      kept = resource;
      hook.disable();
    },
  });
  hook.enable();
  process.nextTick(noop);
}

function noop(): void {}
