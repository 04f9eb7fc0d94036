//! The `replystream` command-line tool.
fn main() {}
