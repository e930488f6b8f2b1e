// Sets `key` as an own, enumerable property of a plain object, also when the key is "__proto__":
// plain assignment of that key replaces the object's prototype instead, so an attribute a user
// named "__proto__" would vanish from an answer (a property test found it in the protobuf
// decoder). JSON.parse already makes such keys own properties.
export function setOwn<V, W extends V>(obj: Record<string, V>, key: string, value: W): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
