//! stub
#![allow(missing_docs)]
pub enum DirectiveEvent {}
pub struct DirectiveOutput;
pub struct DirectiveParser;
