// vitest setup file: loads kafkajs through src/kafka/kafkajs.ts before any test file imports it,
// so in-process servers and test consumers alike use the corrected read-committed filter.
import { kafkajs } from '../../src/kafka/kafkajs.js';

kafkajs();
