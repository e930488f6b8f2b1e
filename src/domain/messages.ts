// The catalogue of error messages that recur across use cases. Their wording is Pilosa 1.4's
// (0.x's for frames and input definitions), because clients and scripts match on it
// (docs/API.md §1.3): change a text here only together with the API it copies. Messages that
// occur once stay beside their check; query errors (the `executing: ` ones) are the executor's.
import { type DomainError, badRequest, conflict, notFound } from './errors.js';

export const indexNotFound = (): DomainError => notFound('index not found');
export const fieldNotFound = (): DomainError => notFound('field not found');
/** Import, export and key translation name what they did not find. */
export const indexNotFoundNamed = (index: string): DomainError => notFound(`index not found: ${index}`);
export const fieldNotFoundNamed = (field: string): DomainError => notFound(`field not found: ${field}`);
export const indexExists = (): DomainError => conflict('index already exists');
export const fieldExists = (): DomainError => conflict('field already exists');

export const frameNotFound = (): DomainError => notFound('frame not found');
export const frameExists = (): DomainError => conflict('frame already exists');
export const inputDefinitionNotFound = (): DomainError => notFound('input-definition not found');
export const inputDefinitionExists = (): DomainError => conflict('input-definition already exists');

/** Pilosa's query-argument validator: an argument the route does not take, or one it lacks. */
export const notValidArgument = (arg: string): DomainError => badRequest(`${arg} is not a valid argument`);
export const argumentRequired = (arg: string): DomainError => badRequest(`${arg} is required`);
