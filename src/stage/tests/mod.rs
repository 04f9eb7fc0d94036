//! Tests of the text stages wired together as the engine wires them (tags → directives →
//! tokens), below the engine: over the sample replies, and for allocations.

mod alloc;
mod corpus;
