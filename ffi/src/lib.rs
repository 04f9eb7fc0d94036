//! The C ABI of replystream.
//!
//! One opaque handle per reply stream ([`replystream_engine`]), push functions for every input
//! kind, and a poll loop for the actions; an options handle with one setter per configuration
//! knob; and the text core (split, chunk) over a buffer. The model is rustls-ffi: result
//! codes with fixed numbers and static messages, no callbacks, every export catches panics,
//! and a handle that panicked is poisoned. The header `include/replystream.h` is generated
//! from these sources by a pinned cbindgen and committed; `tests/header.rs` checks it is
//! current.
//!
//! Modules by concern: [`result`] (codes and version), [`types`] (views, the action record,
//! counters), `handle` (the engine handle, the panic boundary, lifecycle), `args` (argument
//! conversion and the UTF-8 carry of streamed text), `push` (inputs), `poll` (the poll loop
//! and getters), `outcome` (how a turn ended), `options` (the options handle), `text`
//! (split and chunk), `render` (platform formats: the format and entity records, and
//! `replystream_render`).
#![warn(missing_docs)]
// The exported names are C names.
#![allow(non_camel_case_types)]

// Declared in the order the header presents them.
pub mod result;
// Plain types.
pub mod types;
// The engine handle and its lifecycle.
mod handle;
// The options handle.
mod options;
// Inputs.
mod push;
// Outputs.
mod poll;
// How a turn ended.
mod outcome;
// The text core.
mod text;
// Platform formats: rendering and the entity records.
mod render;
// Argument conversion (no exports).
mod args;

pub use handle::*;
pub use options::*;
pub use outcome::*;
pub use poll::*;
pub use push::*;
pub use render::*;
pub use result::*;
pub use text::*;
pub use types::*;

#[cfg(test)]
mod tests;
