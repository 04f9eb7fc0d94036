//! The engine's stages: each a plain struct with `&mut self` methods and its own tests,
//! composed by the engine.

pub mod assembly;
pub mod coalescer;
pub mod dispatch;
pub mod ledger;
pub mod prefix;
