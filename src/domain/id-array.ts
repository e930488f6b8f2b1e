// Decoded ID lists. The protobuf decoder hands out a Uint32Array while every ID fits in 32 bits
// (half the memory of a Float64Array, and the element type alone proves each ID an unsigned
// integer, so validation can skip it); a Float64Array holds larger IDs (up to 2^53−1) and the
// lists from JSON and Kafka, which are checked item by item.
export type IdArray = Uint32Array | Float64Array;
