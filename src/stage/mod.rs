//! The engine's stages: each a plain struct with `&mut self` methods, composed by the engine.

pub mod assembly;
pub mod coalescer;
pub mod prefix;
