//! The engine's stages, each a small struct with `&mut self` methods and its own tests.

pub mod dispatch;
pub mod ledger;
