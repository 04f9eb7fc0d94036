//! stub
#![allow(missing_docs)]
pub struct TokenConfig;
pub struct TokenGate;
pub fn is_silent() {}
pub fn normalize_text() {}
